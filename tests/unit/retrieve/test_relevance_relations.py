"""Relevance: a relation asked of a named thing that has no edge of it (issue 27, wave 10).

"Which database does the pricing service store its data in?" asked of a graph where other services
store data and the pricing service stores none: the answer found through another service, or by a
text search, does not answer the question ("nothing matched", a note naming the relation). The same
relation reached one hop on, through a relation the question also names, is held. The names are made
up (generated), so no vocabulary of a data set decides."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import cef

_CONSONANTS = "bdfgkmnprtvz"
_VOWELS = "aeiou"
_WORD = st.builds(
    lambda syllables, last: ("".join(c + v for c, v in syllables) + last).title(),
    st.lists(st.tuples(st.sampled_from(_CONSONANTS), st.sampled_from(_VOWELS)), min_size=2, max_size=3),
    st.sampled_from("kmnprt"),
)
_NAMES = st.lists(_WORD, min_size=8, max_size=8, unique=True)


def _batch(names: list[str]) -> cef.Batch:
    """Services 0-3: 0-2 store their data in databases 4-6, 3 stores none but depends on service 0;
    every service is owned by team 7; the team and service 0 are led by a person (named after 4)."""
    services = [f"svc-{i}" for i in range(4)]
    nodes = [
        {"id": s, "label": "Service", "properties": {"name": f"{names[i]} service"}}
        for i, s in enumerate(services)
    ]
    nodes += [{"id": f"db-{i}", "label": "Database", "properties": {"name": names[4 + i]}} for i in range(3)]
    nodes.append({"id": "team", "label": "Team", "properties": {"name": f"{names[7]} team"}})
    edges = [{"relation_type": "STORES_DATA_IN", "source": f"svc-{i}", "target": f"db-{i}"} for i in range(3)]
    edges += [{"relation_type": "OWNED_BY", "source": s, "target": "team"} for s in services]
    edges.append({"relation_type": "DEPENDS_ON", "source": "svc-3", "target": "svc-0"})
    nodes.append({"id": "lead", "label": "Person", "properties": {"name": f"{names[4]} {names[5]}"}})
    edges += [{"relation_type": "LED_BY", "source": s, "target": "lead"} for s in ("team", "svc-0")]
    return cef.Batch.model_validate(
        {
            "relation_types": [
                {
                    "name": "STORES_DATA_IN",
                    "inverse": "HOLDS_DATA_FOR",
                    "description": "a service keeps its data in a database",
                },
                {"name": "OWNED_BY", "inverse": "OWNS", "description": "a service is owned by a team"},
                {"name": "LED_BY", "inverse": "LEADS", "description": "a team or service is led by a person"},
                {
                    "name": "DEPENDS_ON",
                    "inverse": "DEPENDED_ON_BY",
                    "description": "a service calls another service",
                },
            ],
            "nodes": nodes,
            "edges": edges,
        }
    )


def _ask(kb: cef.KnowledgeBase, question: str) -> cef.SearchResult:
    """Asked with the rule on (off by default: ``RelevanceSettings.unheld_relations``)."""
    return kb.retrieve(cef.GraphQuery(query=question, options={"relevance": {"unheld_relations": True}}))


@settings(max_examples=4, deadline=None)
@given(names=_NAMES)
def test_a_relation_the_named_thing_lacks_matches_nothing(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp, cef.open(Path(tmp) / "kb.db", embedder=None) as kb:
        kb.index_batch(_batch(names))
        # the fourth service stores no data; the other three do: another's database is no answer
        lacking = _ask(kb, f"Which database does the {names[3]} service store its data in?")
        verdict = lacking.metadata["relevance"]
        assert verdict["nothing_matched"] is True, verdict
        assert lacking.nodes == []
        assert any("STORES_DATA_IN" in note for note in lacking.metadata.get("notes", [])), lacking.metadata
        # a service that has the relation is answered by its database
        held = _ask(kb, f"Which database does the {names[1]} service store its data in?")
        assert held.metadata["relevance"]["nothing_matched"] is False
        assert "db-1" in [n.node.id for n in held.nodes]
        # two hops: the relation held one hop on, through a relation the question also names
        via = _ask(
            kb, f"Which database stores the data of the service that the {names[3]} service depends on?"
        )
        assert via.metadata["relevance"]["nothing_matched"] is False, via.metadata["relevance"]
        # two hops worded its own way ("who leads X": its team, another kind, is led by someone): not lacking
        group = _ask(kb, f"Who leads {names[3]}?")
        assert not any("LED_BY" in note for note in group.metadata.get("notes", [])), group.metadata
        # a relation the named thing has, asked of it: answered
        owner = _ask(kb, f"Which team owns the {names[3]} service?")
        assert owner.metadata["relevance"]["nothing_matched"] is False


@settings(max_examples=3, deadline=None)
@given(names=_NAMES)
def test_the_verdict_follows_the_named_things_edges(names: list[str]) -> None:
    """Once the fourth service stores its data somewhere, the question is answered."""
    question = f"Which database does the {names[3]} service store its data in?"
    with tempfile.TemporaryDirectory() as tmp, cef.open(Path(tmp) / "kb.db", embedder=None) as kb:
        kb.index_batch(_batch(names))
        assert _ask(kb, question).metadata["relevance"]["nothing_matched"] is True
        kb.index_batch(
            cef.Batch.model_validate(
                {"edges": [{"relation_type": "STORES_DATA_IN", "source": "svc-3", "target": "db-2"}]}
            )
        )
        after = _ask(kb, question)
        assert after.metadata["relevance"]["nothing_matched"] is False


@settings(max_examples=2, deadline=None)
@given(names=_NAMES)
def test_the_rule_is_off_by_default(names: list[str]) -> None:
    """By default a relation the named thing lacks does not by itself say 'nothing matched' (the rule
    refused right MetaQA answers: see ``RelevanceSettings.unheld_relations``)."""
    question = f"Which database does the {names[3]} service store its data in?"
    with tempfile.TemporaryDirectory() as tmp, cef.open(Path(tmp) / "kb.db", embedder=None) as kb:
        kb.index_batch(_batch(names))
        default = kb.retrieve(question)
        assert not any("STORES_DATA_IN" in note for note in default.metadata.get("notes", [])), (
            default.metadata
        )
