"""spaCy NER in worker processes finds exactly what it finds in one process, in the same order."""

from __future__ import annotations

from cef.extract.spacy_ner import SpacyEntityExtractor

TEXTS = [
    f"{who} met {other} in {where} in {1900 + i}, and the {org} paid for the trip."
    for i, (who, other, where, org) in enumerate(
        [
            ("Ada Lovelace", "Charles Babbage", "London", "Royal Society"),
            ("Alan Turing", "Max Newman", "Manchester", "University of Manchester"),
            ("Grace Hopper", "Howard Aiken", "Cambridge", "United States Navy"),
            ("Marie Curie", "Pierre Curie", "Paris", "Sorbonne"),
        ]
        * 6
    )
]


def test_worker_processes_give_the_same_mentions_and_progress() -> None:
    one = SpacyEntityExtractor(titles_as_entities=False, n_process=1)
    two = SpacyEntityExtractor(titles_as_entities=False, n_process=2, parallel_from=8, batch_size=4)
    seen: list[tuple[int, int]] = []
    got = two.extract(TEXTS, progress=lambda done, total: seen.append((done, total)))
    assert got == one.extract(TEXTS)
    assert sum(len(m) for m in got) >= 3 * len(TEXTS)  # the names are found, not just equally missed
    assert seen[-1] == (len(TEXTS), len(TEXTS))
