"""The entity index follows writes: after any sequence of writes it equals a build from the store."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef import Batch, Chunk, Edge, Node
from cef.extract.normalize import normalize_name
from cef.retrieve import entities
from cef.retrieve.entities import entity_index
from cef.retrieve.entityindex import EntityIndex
from cef.schema.textgraph import ENTITY_LABEL, MENTIONS, PASSAGE_LABEL, RELATION_TYPES
from tests.unit.retrieve.test_entityfile import fresh_build, same_index

#: names written by the random writes: some collide with each other's keys and with curated names
NAMES = [
    "Budapest",
    "Elena Varga",
    "Varga",
    "Symphony of Tides",
    "Nova",
    "the Nova",
    "Tides",
    "E. Varga",
    "Nova (band)",
]
CURATED = [("person:varga", "Person", "Elena Varga", ["E. Varga"]), ("city:budapest", "City", "Budapest", [])]


def entity(name: str) -> Node:
    return Node(id=f"entity:{normalize_name(name)}", label=ENTITY_LABEL, properties={"name": name})


def passage(pid: str, text: str) -> tuple[Node, Chunk]:
    return (
        Node(id=f"passage:{pid}", label=PASSAGE_LABEL, properties={"name": text[:20]}),
        Chunk(id=pid, content=text, node_id=f"passage:{pid}"),
    )


def mention(pid: str, target: str, title: bool = False) -> Edge:
    return Edge(
        id=f"m:{pid}:{target}",
        relation_type=MENTIONS,
        source=f"passage:{pid}",
        target=target,
        weight=4.0 if title else 1.0,
        properties={"title": True} if title else {},
    )


def base_batch() -> Batch:
    curated = [Node(id=i, label=lb, properties={"name": n, "aliases": a}) for i, lb, n, a in CURATED]
    p0, c0 = passage("c0", "Symphony of Tides was written by Elena Varga.")
    p1, c1 = passage("c1", "Budapest is a city.")
    tides = entity("Symphony of Tides")
    return Batch(
        relation_types=list(RELATION_TYPES),
        nodes=[*curated, p0, p1, tides, entity("Budapest")],
        edges=[
            mention("c0", tides.id, title=True),
            mention("c0", "person:varga"),
            mention("c1", "entity:budapest"),
        ],
        chunks=[c0, c1],
    )


@dataclass
class Kb:
    kb: cef.KnowledgeBase
    passages: list[str]
    entities: list[str]
    made: int = 0


@pytest.fixture
def open_kb(tmp_path: Path) -> Iterator[Kb]:
    with cef.open(tmp_path / "follow.db", embedder=None) as kb:
        kb.index_batch(base_batch())
        yield Kb(kb, ["c0", "c1"], ["entity:symphony of tides", "entity:budapest"])


# one write: what it does and the choices it makes (indexes into the names and the current records)
writes = st.one_of(
    st.tuples(
        st.just("passage"),
        st.lists(
            st.tuples(st.sampled_from(["new", "entity", "curated", "new curated"]), st.integers(0, 99)),
            max_size=4,
        ),
        st.booleans(),
    ),
    st.tuples(st.just("curated"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("chunk"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("delete"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("rename"), st.integers(0, 99), st.booleans()),
)


def apply(k: Kb, write: tuple[Any, ...]) -> None:
    kind = write[0]
    k.made += 1
    uid = f"w{k.made}"
    if kind == "passage":
        _, targets, titled = write
        node, chunk = passage(uid, f"Text {uid} about things.")
        nodes, edges = [node], []
        for i, (what, n) in enumerate(targets):
            if what == "new":
                target = entity(NAMES[n % len(NAMES)])
                if not k.kb.state.graph.has_node(target.id):
                    nodes.append(target)
            elif what == "entity":
                target_id = k.entities[n % len(k.entities)]
                edges.append(mention(uid, target_id, title=titled and i == 0))
                continue
            elif what == "curated":  # a MENTIONS edge to an existing curated node
                edges.append(mention(uid, CURATED[n % len(CURATED)][0], title=titled and i == 0))
                continue
            else:
                target = Node(
                    id=f"curated:{uid}:{i}", label="Person", properties={"name": NAMES[n % len(NAMES)]}
                )
                nodes.append(target)
            edges.append(mention(uid, target.id, title=titled and i == 0))
        nodes = list({n.id: n for n in nodes}.values())
        edges = list({e.id: e for e in edges}.values())
        k.kb.indexer.upsert_batch(Batch(nodes=nodes, edges=edges, chunks=[chunk]))
        k.passages.append(uid)
        k.entities.extend(n.id for n in nodes if n.label == ENTITY_LABEL and n.id not in k.entities)
    elif kind == "curated":  # a curated node nothing mentions
        _, n, with_alias = write
        name = NAMES[n % len(NAMES)]
        props = {"name": name, "aliases": [f"{name} Jr"]} if with_alias else {"name": name}
        k.kb.indexer.upsert_batch(Batch(nodes=[Node(id=f"curated:{uid}", label="Person", properties=props)]))
    elif kind == "chunk":  # another chunk of an existing passage
        pid = k.passages[write[1] % len(k.passages)]
        k.kb.indexer.upsert_batch(
            Batch(chunks=[Chunk(id=f"{pid}-{uid}", content=f"More {uid}.", node_id=f"passage:{pid}")])
        )
    elif kind == "delete" and len(k.passages) > 1:
        pid = k.passages.pop(write[1] % len(k.passages))
        k.kb.indexer.upsert_batch(Batch(), remove_nodes=[f"passage:{pid}"])
    elif kind == "rename":
        eid = k.entities[write[1] % len(k.entities)]
        if k.kb.state.graph.has_node(eid):
            k.kb.indexer.upsert_batch(
                Batch(nodes=[Node(id=eid, label=ENTITY_LABEL, properties={"name": f"Renamed {uid}"})])
            )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=st.lists(writes, min_size=1, max_size=6))
def test_the_index_after_random_writes_equals_a_build(
    tmp_path_factory: pytest.TempPathFactory, sequence: list[tuple[Any, ...]]
) -> None:
    folder = tmp_path_factory.mktemp("follow")
    with cef.open(folder / "follow.db", embedder=None) as kb:
        kb.index_batch(base_batch())
        k = Kb(kb, ["c0", "c1"], ["entity:symphony of tides", "entity:budapest"])
        with kb.state.reading():
            entity_index(kb.state)
        for write in sequence:
            apply(k, write)
            with kb.state.reading():
                same_index(entity_index(kb.state), fresh_build(kb))


def test_a_new_passage_is_followed_not_built(open_kb: Kb, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_kb.kb.state.reading():
        entity_index(open_kb.kb.state)
    built: list[int] = []
    real = entities._build

    def counted(*args: Any) -> EntityIndex:
        built.append(1)
        return real(*args)

    monkeypatch.setattr(entities, "_build", counted)
    apply(open_kb, ("passage", [("new", 4), ("entity", 0), ("new", 1)], True))
    with open_kb.kb.state.reading():
        index = entity_index(open_kb.kb.state)
        assert built == []  # followed
        same_index(index, fresh_build(open_kb.kb))
        assert index.key_index["nova"] == open_kb.kb.state.graph.pos("entity:nova")


def test_a_mention_of_an_existing_curated_node_that_was_no_entity_builds_the_index(open_kb: Kb) -> None:
    kb = open_kb.kb
    kb.index_batch(Batch(nodes=[Node(id="person:ada", label="Person", properties={"name": "Ada"})]))
    with kb.state.reading():
        before = entity_index(kb.state)
        assert "ada" in before.key_index
    apply(open_kb, ("passage", [("curated", 0)], False))  # person:varga: an entity already -> followed
    node, chunk = passage("c9", "Ada wrote it.")
    kb.index_batch(Batch(nodes=[node], edges=[mention("c9", "person:ada")], chunks=[chunk]))
    with kb.state.reading():
        same_index(entity_index(kb.state), fresh_build(kb))
