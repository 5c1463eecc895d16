"""Conversations as memory: layouts, relative dates, scopes, re-ingest, one answer from every door."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import cef
from cef import GraphQuery, SearchStrategy
from cef.errors import ValidationError
from cef.extract.reldates import resolve_dates
from cef.memory.conversation import (
    Conversation,
    Session,
    Turn,
    ingest_conversation,
    read_conversations,
)

SAID = datetime(2023, 5, 8, 13, 56)  # a Monday


@pytest.mark.parametrize(
    ("text", "expression", "expected", "period"),
    [
        ("I went to a support group yesterday and it was powerful.", "yesterday", "2023-05-07", "day"),
        ("See you tomorrow!", "tomorrow", "2023-05-09", "day"),
        ("Last Saturday we went camping.", "Last Saturday", "2023-05-06", "day"),
        ("I got it 3 days ago.", "3 days ago", "2023-05-05", "day"),
        ("Two weeks ago I painted a lake.", "Two weeks ago", "2023-04-24", "week"),
        ("We met last week.", "last week", "2023-05-01", "week"),
        ("Next month I'm going to Paris.", "Next month", "2023-06", "month"),
        ("I painted that sunrise last year!", "last year", "2022", "year"),
        ("I have been painting since 2019.", "2019", "2019", "year"),
        # spoken forms dateparser does not read: a weekend is its week, "a couple of" 2, "a few" 3
        ("Last weekend we went camping.", "Last weekend", "2023-05-01", "week"),
        ("We camped two weekends ago.", "two weekends ago", "2023-04-24", "week"),
        ("A couple of weeks ago I ran a charity race.", "A couple of weeks ago", "2023-04-24", "week"),
        ("I met her a few days ago.", "a few days ago", "2023-05-05", "day"),
    ],
)
def test_relative_dates_resolve_against_when_they_were_said(
    text: str, expression: str, expected: str, period: str
) -> None:
    found = resolve_dates(text, SAID)
    assert [(r.text, r.iso(), r.period) for r in found] == [(expression, expected, period)]


_SPOKEN_PARTS = [
    "we went camping",
    "last weekend",
    "a couple of weeks ago",
    "a few days ago",
    "two weekends ago",
    "a few friends",
    "yesterday",
    "in 2022",
    "and",
    "Weekend",
]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_SPOKEN_PARTS), min_size=1, max_size=5))
def test_a_resolved_expression_is_what_was_said(parts: list[str]) -> None:
    """Spoken forms are rewritten for the parser, but each expression is reported as said."""
    text = " ".join(parts) + "."
    for r in resolve_dates(text, SAID):
        assert r.text in text


@pytest.mark.parametrize(
    "text",
    [
        "Hey Mel! Good to see you! How have you been?",
        "Sun is out, we may go",
        "We should talk.",
        "A few friends came over.",
        "Weekends are for the kids.",
    ],
)
def test_ordinary_words_are_not_dates(text: str) -> None:
    assert resolve_dates(text, SAID) == []


def _conversation(
    cid: str, speakers: tuple[str, str], lines: list[list[str]], dates: list[str]
) -> Conversation:
    conv = Conversation(cid)
    for n, (said, date) in enumerate(zip(lines, dates, strict=True), 1):
        sess = Session(f"D{n}", datetime.fromisoformat(date + "T10:00:00+00:00"))
        for j, text in enumerate(said, 1):
            sess.turns.append(Turn(f"{cid}/D{n}:{j}", speakers[(j - 1) % 2], text))
        conv.sessions.append(sess)
    return conv


ALICE = _conversation(
    "alice",
    ("Alice", "Bob"),
    [
        ["Hi Bob! I adopted a puppy yesterday, a beagle named Biscuit.", "A beagle! What colour is he?"],
        ["Biscuit chewed my running shoes last night.", "Ha, puppies. Did you buy new ones?"],
        ["I am learning to play the cello, my first lesson was great.", "The cello is a lovely instrument."],
    ],
    ["2023-05-08", "2023-06-02", "2023-07-14"],
)
CAROL = _conversation(
    "carol",
    ("Carol", "Dan"),
    [
        ["Dan, I adopted a puppy too! A beagle called Pepper.", "Another beagle, how fun."],
        ["I took up the cello as well, it is hard.", "Keep practising, Carol."],
    ],
    ["2023-05-10", "2023-06-20"],
)


def test_turns_are_chunks_of_dated_sessions_with_resolved_dates(kb: cef.KnowledgeBase) -> None:
    report = ingest_conversation(kb, ALICE, scope="alice", enricher=None)
    assert (report.turns, report.written, report.unchanged) == (6, 6, 0)
    chunk = kb.get_chunk("alice/D1:1")
    assert chunk is not None and chunk.scope == "alice"
    assert chunk.content.startswith("Alice (8 May 2023): Hi Bob! I adopted a puppy yesterday [7 May 2023]")
    assert chunk.metadata["dates"] == [{"text": "yesterday", "date": "2023-05-07", "period": "day"}]
    assert chunk.metadata["speaker"] == "Alice" and chunk.metadata["next"] == "alice/D1:2"
    reply = kb.get_chunk("alice/D1:2")
    assert reply is not None and "(in reply to Alice: Hi Bob!" in reply.content
    session = kb.find_node(str(chunk.node_id))
    assert (
        session is not None
        and session.label == "Session"
        and session.properties["date"].startswith("2023-05-08")
    )
    assert kb.find_node("person:alice/alice") is not None
    # the resolved date is searchable
    hits = kb.full_text_search("7 May 2023", scope="alice")
    assert hits and hits[0].chunk.id == "alice/D1:1"


def test_a_question_in_one_conversation_never_returns_another_conversations_turn(
    kb: cef.KnowledgeBase,
) -> None:
    ingest_conversation(kb, ALICE, scope="alice", enricher=None)
    ingest_conversation(kb, CAROL, scope="carol", enricher=None)
    for question in (
        "Who adopted a beagle puppy?",
        "When did Carol take up the cello?",
        "Pepper Biscuit cello",
    ):
        for scope, other in (("alice", "carol/"), ("carol", "alice/")):
            res = kb.retrieve(GraphQuery(query=question, scope=scope, min_results=1))
            assert res.results
            assert not any(r.chunk.id.startswith(other) for r in res.results)
    res = kb.retrieve(GraphQuery(query="What is the puppy called?", scope="carol", min_results=1))
    assert res.results[0].chunk.id == "carol/D1:1"


def test_reingest_with_one_changed_turn_rewrites_that_turn_only(kb: cef.KnowledgeBase) -> None:
    ingest_conversation(kb, ALICE, scope="alice", enricher=None)
    before = {c.id: c for c in kb.get_chunks([t.id for s in ALICE.sessions for t in s.turns])}
    again = ingest_conversation(kb, ALICE, scope="alice", enricher=None)
    assert (again.written, again.unchanged, again.removed) == (0, 6, 0)

    changed = _conversation(
        "alice",
        ("Alice", "Bob"),
        [
            ["Hi Bob! I adopted a puppy yesterday, a beagle named Biscuit.", "A beagle! What colour is he?"],
            ["Biscuit chewed my hiking boots last night.", "Ha, puppies. Did you buy new ones?"],
            [
                "I am learning to play the cello, my first lesson was great.",
                "The cello is a lovely instrument.",
            ],
        ],
        ["2023-05-08", "2023-06-02", "2023-07-14"],
    )
    report = ingest_conversation(kb, changed, scope="alice", enricher=None)
    # the changed turn, and the reply quoting it in its "in reply to" line
    assert (report.written, report.unchanged, report.removed) == (2, 4, 0)
    after = {c.id: c for c in kb.get_chunks(list(before))}
    assert "hiking boots" in after["alice/D2:1"].content
    assert "hiking boots" in after["alice/D2:2"].content
    for cid in set(before) - {"alice/D2:1", "alice/D2:2"}:
        assert after[cid] == before[cid]
    assert kb.full_text_search("running shoes", scope="alice") == []

    shorter = Conversation("alice", changed.sessions[:2])
    report = ingest_conversation(kb, shorter, scope="alice", enricher=None)
    assert report.removed == 2
    assert kb.get_chunk("alice/D3:1") is None
    assert kb.find_node("session:alice/alice/D3") is None
    assert kb.find_node("session:alice/alice/D2") is not None
    assert kb.full_text_search("cello", scope="alice") == []


LOCOMO = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I ran a marathon last Sunday!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Wow!", "blip_caption": "a photo of a medal"},
        ],
        "session_2_date_time": "10:00 am on 1 June, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "My knee hurts now."}],
    },
    "qa": [],
}


def test_the_three_layouts_read_the_same_conversation(tmp_path: Path) -> None:
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([LOCOMO]))
    plain = tmp_path / "plain.json"
    plain.write_text(
        json.dumps(
            {
                "id": "conv-x",
                "sessions": [
                    {
                        "id": "D1",
                        "date": "2023-05-08T13:56:00",
                        "turns": [
                            {"id": "conv-x/D1:1", "speaker": "Ann", "text": "I ran a marathon last Sunday!"},
                            {
                                "id": "conv-x/D1:2",
                                "speaker": "Ben",
                                "text": "Wow!",
                                "image_caption": "a photo of a medal",
                            },
                        ],
                    },
                    {
                        "id": "D2",
                        "date": "2023-06-01T10:00:00",
                        "turns": [{"id": "conv-x/D2:1", "speaker": "Ann", "text": "My knee hurts now."}],
                    },
                ],
            }
        )
    )
    lines = tmp_path / "turns.jsonl"
    lines.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "id": "conv-x/D1:1",
                    "conversation": "conv-x",
                    "session": "D1",
                    "date": "2023-05-08T13:56:00",
                    "speaker": "Ann",
                    "text": "I ran a marathon last Sunday!",
                },
                {
                    "id": "conv-x/D1:2",
                    "conversation": "conv-x",
                    "session": "D1",
                    "date": "2023-05-08T13:56:00",
                    "speaker": "Ben",
                    "text": "Wow!",
                    "image_caption": "a photo of a medal",
                },
                {
                    "id": "conv-x/D2:1",
                    "conversation": "conv-x",
                    "session": "D2",
                    "date": "2023-06-01T10:00:00",
                    "speaker": "Ann",
                    "text": "My knee hurts now.",
                },
            ]
        )
    )
    read = [read_conversations(p) for p in (locomo, plain, lines)]
    for convs in read:
        assert len(convs) == 1
        conv = convs[0]
        assert conv.id == "conv-x"
        assert [s.key for s in conv.sessions] == ["D1", "D2"]
        assert [s.date.date().isoformat() if s.date else None for s in conv.sessions] == [
            "2023-05-08",
            "2023-06-01",
        ]
        assert [t.id for s in conv.sessions for t in s.turns] == ["conv-x/D1:1", "conv-x/D1:2", "conv-x/D2:1"]
        assert conv.sessions[0].turns[1].image_caption == "a photo of a medal"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "c", "sessions": [{"date": "2023-01-01", "turns": [{"speaker": "A"}]}]}', "text must be"),
        ('{"id": "c", "sessions": [{"date": "not a date at all", "turns": []}]}', "cannot read the date"),
        ('{"id": "c"}', "not a conversation"),
        ('{"speaker": "A", "text": "hi"}\n{oops', "line 2: not JSON"),
        ("", "empty file"),
    ],
)
def test_bad_files_say_what_is_wrong(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValidationError, match=message):
        read_conversations(path)


def test_same_turns_from_python_and_the_cef_context_command(tmp_path: Path) -> None:
    from cef.cli import app

    db = tmp_path / "memory.db"
    with cef.open(db, embedder=None) as kb:
        ingest_conversation(kb, ALICE, scope="alice", enricher=None)
        question = "What did Biscuit chew?"
        python = [r.chunk.id for r in kb.retrieve(GraphQuery(query=question, scope="alice", top_k=3)).results]
    assert "alice/D2:1" in python
    out = CliRunner().invoke(
        app,
        [
            "context",
            question,
            "--db",
            str(db),
            "--embedder",
            "none",
            "--scope",
            "alice",
            "--top-k",
            "3",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    shown = [c["id"] for c in json.loads(out.output)["chunks"]]
    assert shown == python


def test_cef_memory_ingest_reads_a_conversation_file_into_its_scope(tmp_path: Path) -> None:
    from cef.cli import app

    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([LOCOMO]))
    db = tmp_path / "memory.db"
    args = [
        "memory",
        "ingest",
        str(path),
        "--content-type",
        "conversation",
        "--db",
        str(db),
        "--embedder",
        "none",
    ]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "conv-x (scope conv-x): 3 turn(s), 3 written" in out.output
    again = CliRunner().invoke(app, args)
    assert "0 written, 3 unchanged" in again.output
    with cef.open(db, embedder=None) as kb:
        res = kb.retrieve(GraphQuery(query="When did Ann run a marathon?", scope="conv-x", min_results=1))
        assert res.results[0].chunk.id == "conv-x/D1:1"
        assert "last Sunday [7 May 2023]" in res.results[0].chunk.content


def test_memory_context_shows_the_turns_the_engine_ranks(tmp_path: Path) -> None:
    from cef.cli import app
    from cef.memory import SemanticMemory

    db = tmp_path / "memory.db"
    question = "What did Biscuit chew?"
    with cef.open(db, embedder=None) as kb:
        ingest_conversation(kb, ALICE, scope="alice", enricher=None)
        ingest_conversation(kb, CAROL, scope="carol", enricher=None)
        engine = [
            r.chunk.id for r in kb.retrieve(GraphQuery(query=question, scope="alice", min_results=1)).results
        ]
        memory = SemanticMemory(kb, extractor=None)
        bundle = memory.retrieve_context(question, scope="alice")
        assert [p.id for p in bundle.passages] == engine
        assert "Said in conversations" in bundle.to_text("markdown")
    out = CliRunner().invoke(
        app,
        [
            "memory",
            "context",
            question,
            "--db",
            str(db),
            "--embedder",
            "none",
            "--scope",
            "alice",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    shown = [p["id"] for p in json.loads(out.output)["passages"]]
    assert shown == engine
    assert not any(i.startswith("carol/") for i in shown)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("When did Melanie go camping in June?", [(None, 6, None)]),
        ("What did Caroline show on October 13, 2023?", [(2023, 10, 13)]),
        ("How often did she go to the beach in 2023?", [(2023, None, None)]),
        ("What did she do last week?", []),
        ("When did Caroline go to the support group?", []),
    ],
)
def test_calendar_dates_a_question_names(question: str, asked: list[tuple[int | None, ...]]) -> None:
    from cef.retrieve.dialoguequestion import asked_dates as _asked_dates

    assert _asked_dates(question) == asked


def test_a_question_naming_a_date_prefers_the_turns_of_that_date(kb: cef.KnowledgeBase) -> None:
    ingest_conversation(kb, ALICE, scope="alice", enricher=None)
    question = "What happened with Biscuit in June 2023?"
    plain = kb.retrieve(GraphQuery(query=question, scope="alice", options={"dialogue": {"date": 0.0}}))
    dated = kb.retrieve(GraphQuery(query=question, scope="alice"))
    assert dated.results[0].chunk.id.startswith("alice/D2:")
    assert dated.results[0].score > plain.results[0].score or plain.results[0].chunk.id.startswith(
        "alice/D2:"
    )


def test_text_that_is_not_a_conversation_takes_the_usual_route(kb: cef.KnowledgeBase) -> None:
    from cef import Batch, Chunk

    ingest_conversation(kb, ALICE, scope="alice", enricher=None)
    kb.index_batch(Batch(chunks=[Chunk(id="doc-1", content="Warfarin needs regular INR monitoring.")]))
    res = kb.retrieve(GraphQuery(query="How is warfarin monitored?", min_results=1))
    assert res.results[0].chunk.id == "doc-1"
    assert "dialogue" not in res.metadata.get("route", {})


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcdefghij yesterdaylastweek0123456789,.!May")), max_size=60))
def test_resolved_expressions_are_spans_of_the_text(text: str) -> None:
    for r in resolve_dates(text, SAID):
        assert r.text and r.text in text
        assert r.period in ("day", "week", "month", "year")


def test_rest_and_mcp_return_the_turns_python_does(tmp_path: Path) -> None:
    """The REST route and the MCP tool (the call the MCP server makes) answer a conversation question
    with the same turns as Python (the CLI doors are checked above)."""
    import anyio
    from fastapi.testclient import TestClient

    from cef.server.http import create_app
    from cef.server.service import CefService
    from cef.server.settings import ServerSettings

    question = "What did Biscuit chew?"
    with cef.open(tmp_path / "memory.db", embedder=None) as kb:
        ingest_conversation(kb, ALICE, scope="alice", enricher=None)
        ingest_conversation(kb, CAROL, scope="carol", enricher=None)
        python = [r.chunk.id for r in kb.retrieve(GraphQuery(query=question, scope="alice", top_k=3)).results]
        assert python[0] == "alice/D2:1"
        with TestClient(create_app(kb, ServerSettings())) as client:
            r = client.post("/api/v1/retrieve", json={"query": question, "scope": "alice", "top_k": 3})
            assert r.status_code == 200, r.text
            rest = [x["chunk"]["id"] for x in r.json()["results"]]
        service = CefService(kb, ServerSettings(), context=False)
        args = {"query": question, "scope": "alice", "top_k": 3}
        result = anyio.run(lambda: service.call_tool("retrieve_knowledge", args, writable=False))
        mcp = [x.chunk.id for x in result.results]  # type: ignore[attr-defined]
    assert rest == mcp == python


def test_a_question_finds_turns_by_the_stems_of_their_words(kb: cef.KnowledgeBase) -> None:
    """Full-text search matches words as written ("adopts" finds no "adopted"); the dialogue stage
    matches their stems, among the conversation's own turns."""
    ingest_conversation(kb, ALICE, scope="alice", enricher=None)
    ingest_conversation(kb, CAROL, scope="carol", enricher=None)
    question = "Who adopts beagles?"
    assert not kb.retrieve(GraphQuery(query=question, scope="alice", strategy=SearchStrategy.BM25)).results
    got = [r.chunk.id for r in kb.retrieve(GraphQuery(query=question, scope="alice", top_k=2)).results]
    # the turn that says it, and the reply that holds it as the turn it answers
    assert set(got) == {"alice/D1:1", "alice/D1:2"}


def test_a_short_turn_gains_from_the_turns_around_it(kb: cef.KnowledgeBase) -> None:
    """A turn that says little by itself is found by the turns it sits between."""
    talk = _conversation(
        "eve",
        ("Eve", "Finn"),
        [
            ["I baked sourdough bread this morning.", "Ha, me too!", "Nice, what flour did you use?"],
            ["The weather is grey today.", "It is, I stayed inside and read.", "Reading sounds cosy."],
        ],
        ["2023-03-01", "2023-03-08"],
    )
    ingest_conversation(kb, talk, scope="eve", enricher=None)
    question = "Who baked sourdough bread?"

    def rank(neighbours: float) -> list[str]:
        q = GraphQuery(query=question, scope="eve", top_k=6, options={"dialogue": {"neighbours": neighbours}})
        return [r.chunk.id for r in kb.retrieve(q).results]

    with_context, alone = rank(0.25), rank(0.0)
    assert with_context[0] == alone[0] == "eve/D1:1"
    # "Nice, what flour did you use?" shares no word with the question: found by its neighbours only
    assert "eve/D1:3" in with_context and "eve/D1:3" not in alone
    assert not any(i.startswith("eve/D2") for i in with_context)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is Gina restoring?", "What is restoring?"),
        ("What are Gina's dogs' names?", "What are dogs' names?"),
        ("Would gina and Hal like sailing?", "Would and like sailing?"),
        ("Who is Ginasaurus?", "Who is Ginasaurus?"),  # a name inside a word is not the name
        ("Gina?", "Gina?"),  # nothing but the name: the question itself
    ],
)
def test_a_question_without_the_speakers_names(question: str, expected: str) -> None:
    from cef.retrieve.dialoguequestion import without_speakers as _without_speakers

    assert _without_speakers(question, frozenset({"Gina", "Hal"})) == expected


@given(st.text(alphabet="abcdefg ' ?", max_size=40))
@settings(max_examples=200, deadline=None)
def test_the_names_are_gone_unless_nothing_else_is_left(question: str) -> None:
    from cef.retrieve.dialoguequestion import without_speakers as _without_speakers
    from cef.text import words

    out = _without_speakers(question, frozenset({"abe", "bad"}))
    assert out == question or not {"abe", "bad"} & set(words(out))


def test_a_question_naming_a_speaker_is_embedded_without_the_name(tmp_path: Path) -> None:
    """A name weighs much in a short question's embedding: matched with it, whatever the person
    said, or was told by name, comes near; the dialogue stage embeds the question without the
    speakers' names, so meaning ranks what was said about what is asked."""
    talk = _conversation(
        "gina",
        ("Gina", "Hal"),
        [
            ["Hey Hal, long week.", "Gina! So good to see you, Gina. How have you been, Gina?"],
            ["I have been restoring an old sailboat on weekends.", "That sounds like a big project."],
        ],
        ["2023-03-01", "2023-03-08"],
    )
    with cef.open(tmp_path / "gina.db") as kb:  # the default embedder
        ingest_conversation(kb, talk, scope="gina", enricher=None)
        res = kb.retrieve(GraphQuery(query="What is Gina restoring?", scope="gina", top_k=4))
    by_vector = {r.chunk.id: r.explanation.rank_sources.get("vector", 0) for r in res.results}
    assert res.results[0].chunk.id == "gina/D2:1" and by_vector["gina/D2:1"] == 1
    # next by meaning: the reply about the boat, not Gina's small talk (every turn of hers is
    # embedded with her name: matched with the name, it came second)
    assert by_vector["gina/D2:2"] == 2 and by_vector["gina/D1:1"] > 2
