"""One registry per knowledge base (``kb.schema``): every write is checked through it, plain writes
and the memory's extensions register into it, schema discovery and the doors report it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef import Batch, Edge, Node, RelationType
from cef.engine.access import Access, TenantView
from cef.errors import (
    ForbiddenError,
    InvalidPropertyError,
    UnknownNodeTypeError,
    UnknownRelationTypeError,
    ValidationError,
)
from cef.memory import NodeKind, SemanticMemory, SemanticMemoryExtension
from cef.schema.discovery import describe_schema, discover_schema
from cef.schema.registry import LEGACY_PREFIX, META_PREFIX
from cef.server.http import create_app
from cef.server.service import CefService
from cef.server.settings import ApiKey, ServerSettings
from cef.server.tools import tool_definitions


class WorkshopExtension(SemanticMemoryExtension):
    """A domain declared through the memory (module level: restorable on reopen)."""

    name = "workshop"

    def register(self, memory: Any) -> None:
        reg = memory.get_extension_registry()
        reg.register_node_type("Tool", NodeKind.INSTANCE, {"weight_kg": "float"}, description="a hand tool")
        reg.register_node_type("Bench", NodeKind.INSTANCE, description="a work bench")
        reg.register_edge_type(
            "HANGS_ON",
            source_types=["Tool"],
            target_types=["Bench"],
            properties_schema={"hook": {"type": "int", "required": True}},
            inverse="HOLDS",
            description="a tool hangs on a bench",
        )


def registry_meta(kb: cef.KnowledgeBase) -> list[tuple[str, Any]]:
    return kb.store.meta_items(META_PREFIX)


# ---------------------------------------------------------------------------------------------- plain writes
def test_a_plain_write_registers_its_labels_with_an_inferred_kind(
    kb: cef.KnowledgeBase, tmp_path: Path
) -> None:
    kb.index_batch(
        Batch(
            nodes=[Node(id="p", label="Pump"), Node(id="e", label="Event"), Node(id="t", label="TimePoint")]
        )
    )
    pump = kb.schema.node_type("Pump")
    assert pump is not None and not pump.declared and pump.parent == "unknown"
    assert kb.schema.kind_of("Pump") is None
    assert (
        kb.schema.kind_of("Event") is NodeKind.EVENT and kb.schema.kind_of("TimePoint") is NodeKind.TIME_POINT
    )
    assert kb.schema.is_a("TimePoint", "time_point")
    version = kb.store.get_meta(META_PREFIX + "version")
    kb.index_node(Node(id="p2", label="Pump"))  # a label already registered writes no registration
    assert kb.store.get_meta(META_PREFIX + "version") == version
    kb.delete_node("p")
    kb.delete_node("p2")
    kb.close()
    with cef.open(tmp_path / "kb.db", embedder=None) as again:  # registered for good, not only while used
        assert again.schema.node_type("Pump") == pump
        assert again.schema.kind_of("Event") is NodeKind.EVENT


def test_plain_writes_and_a_memory_extension_land_in_one_registry(tmp_path: Path) -> None:
    kb = cef.open(tmp_path / "kb.db", embedder=None)
    kb.index_node(Node(id="t1", label="Tool", properties={"name": "Hammer"}))
    memory = SemanticMemory(kb, extractor=None)
    try:
        assert memory.registry is kb.schema and memory.get_extension_registry() is kb.schema
        memory.register_extension(WorkshopExtension())
        tool = kb.schema.node_type("Tool")
        # the first declaration places the label a plain write registered
        assert (
            tool is not None
            and tool.declared
            and tool.parent == "instance"
            and tool.description == "a hand tool"
        )
        assert kb.schema.edge_type("HANGS_ON").properties["hook"].required  # type: ignore[union-attr]
        assert kb.schema.relation_type("HANGS_ON").inverse == "HOLDS"  # type: ignore[union-attr]
        assert {"Tool", "Bench", "document", "entity"} <= set(kb.schema.declared_node_types)
    finally:
        memory.close()
    # the memory's registrations bind a plain write of the knowledge base: one vocabulary
    kb.index_node(Node(id="b1", label="Bench", properties={"name": "North bench"}))
    before = kb.store.counts()
    with pytest.raises(InvalidPropertyError, match=r"edge .*HANGS_ON.*required property 'hook' is missing"):
        kb.index_edge(Edge(relation_type="HOLDS", source="b1", target="t1"))
    with pytest.raises(InvalidPropertyError, match=r"property 'weight_kg': expected float, got str"):
        kb.index_node(Node(id="t2", label="Tool", properties={"weight_kg": "heavy"}))
    with pytest.raises(ValidationError, match=r"source 'b1' has type 'Bench' but relation 'HANGS_ON'"):
        kb.index_edge(Edge(relation_type="HANGS_ON", source="b1", target="t1", properties={"hook": 1}))
    assert kb.store.counts() == before
    stored = kb.index_edge(Edge(relation_type="HOLDS", source="b1", target="t1", properties={"hook": 3}))
    assert (stored.relation_type, stored.source, stored.target) == ("HANGS_ON", "t1", "b1")
    kb.close()
    with cef.open(tmp_path / "kb.db", embedder=None) as again:  # persisted in the store, without the memory
        assert again.schema.node_type("Tool").description == "a hand tool"  # type: ignore[union-attr]
        with pytest.raises(InvalidPropertyError, match="hook"):
            again.index_edge(
                Edge(relation_type="HANGS_ON", source="t1", target="b1", properties={"hook": "x"})
            )


# ---------------------------------------------------------------------------------------------- bad writes
def test_an_unknown_relation_type_is_a_clear_error_and_registers_nothing(kb: cef.KnowledgeBase) -> None:
    kb.index_node(Node(id="a", label="Pump"))
    before, meta = kb.store.counts(), registry_meta(kb)
    with pytest.raises(UnknownRelationTypeError) as err:
        kb.index_batch(
            Batch(
                nodes=[Node(id="v", label="Valve")],
                edges=[Edge(relation_type="FEEDS", source="a", target="v")],
            )
        )
    message = str(err.value)
    assert "unknown relation type 'FEEDS' (edge" in message and "edges[0]" in message
    assert "register_relation_type" in message and "relation_types" in message
    assert kb.store.counts() == before and registry_meta(kb) == meta
    assert kb.schema.node_type("Valve") is None  # the refused write's new label was not registered


def test_upserts_and_updates_are_checked_like_new_records(kb: cef.KnowledgeBase) -> None:
    kb.schema.register_node_type("Gauge", NodeKind.INSTANCE, {"bar": {"type": "float", "required": True}})
    kb.index_node(Node(id="g", label="Gauge", properties={"bar": 1.5}))
    before = kb.store.counts()
    with pytest.raises(InvalidPropertyError, match=r"node 'g' .*required property 'bar' is missing"):
        kb.indexer.upsert_batch(Batch(nodes=[Node(id="g", label="Gauge", properties={"name": "G"})]))
    with pytest.raises(UnknownRelationTypeError, match="'NOPE'"):
        kb.indexer.upsert_batch(Batch(edges=[Edge(id="e", relation_type="NOPE", source="g", target="g")]))
    with pytest.raises(InvalidPropertyError, match="property 'bar': expected float"):
        kb.update_node("g", {"bar": "high"})
    assert kb.store.counts() == before and kb.find_node("g").properties == {"bar": 1.5}  # type: ignore[union-attr]
    kb.update_node("g", {"bar": 2.0}, label="Dial")  # a new label through an update is registered too
    assert kb.schema.node_type("Dial") is not None


def test_a_strict_registry_refuses_labels_only_ever_written(kb: cef.KnowledgeBase) -> None:
    kb.index_node(Node(id="a", label="Pump"))
    kb.schema.set_strict(True)
    with pytest.raises(UnknownNodeTypeError, match=r"type 'Pump' is not registered \(strict registry\)"):
        kb.index_node(Node(id="b", label="Pump"))
    kb.schema.register_node_type("Pump", NodeKind.INSTANCE)
    kb.index_node(Node(id="b", label="Pump"))


def test_a_batch_cannot_declare_an_inverse_that_is_a_relation(kb: cef.KnowledgeBase) -> None:
    kb.register_relation_type(RelationType(name="FEEDS"))
    with pytest.raises(ValidationError, match="declares inverse 'FEEDS', which is already a relation type"):
        kb.index_batch(Batch(relation_types=[RelationType(name="DRAINS", inverse="FEEDS")]))
    assert kb.schema.relation_type("DRAINS") is None


# ---------------------------------------------------------------------------------------------- processes
def test_another_process_sees_registrations_through_the_change_feed(tmp_path: Path) -> None:
    with (
        cef.open(tmp_path / "kb.db", embedder=None) as one,
        cef.open(tmp_path / "kb.db", embedder=None) as two,
    ):
        one.schema.register_node_type("Pump", NodeKind.INSTANCE, description="moves water")
        one.index_node(Node(id="v", label="Valve"))
        assert two.find_node("v") is not None  # a read catches up with the other's commits
        assert two.schema.node_type("Pump").description == "moves water"  # type: ignore[union-attr]
        assert two.schema.node_type("Valve") is not None


def test_a_first_write_racing_a_declaration_never_replaces_it(tmp_path: Path) -> None:
    from cef.schema.checks import seen_key
    from cef.store.base import WriteSet

    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.schema.register_node_type("Pump", NodeKind.INSTANCE, description="moves water")
        # what another process that had not yet seen the declaration commits for its first Pump
        kb.state.commit(
            WriteSet(meta={seen_key("Pump"): {"name": "Pump", "parent": "unknown", "declared": False}})
        )
        assert kb.schema.node_type("Pump").declared  # type: ignore[union-attr]
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        assert kb.schema.node_type("Pump").description == "moves water"  # type: ignore[union-attr]
        assert kb.schema.kind_of("Pump") is NodeKind.INSTANCE


def test_an_open_registration_batch_is_invisible_to_writes_of_other_threads(kb: cef.KnowledgeBase) -> None:
    import threading

    inside, done = threading.Event(), threading.Event()

    def declare() -> None:
        with kb.schema.batch():
            kb.schema.register_node_type(
                "Gauge", NodeKind.INSTANCE, {"bar": {"type": "float", "required": True}}
            )
            inside.set()
            done.wait(10)

    t = threading.Thread(target=declare)
    t.start()
    assert inside.wait(10)
    try:
        kb.index_node(Node(id="g1", label="Gauge"))  # not yet declared: nothing required
        assert not kb.schema.node_type("Gauge").declared  # type: ignore[union-attr]
    finally:
        done.set()
        t.join(10)
    assert kb.schema.node_type("Gauge").declared  # type: ignore[union-attr]  # the declaration wins
    with pytest.raises(InvalidPropertyError, match="required property 'bar'"):
        kb.index_node(Node(id="g2", label="Gauge"))


def test_opening_a_knowledge_base_never_runs_code_its_store_names(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    plugin = tmp_path / "checks.py"
    plugin.write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('yes')\n"
        "def no_pumps(node):\n    return 'no pumps here'\n"
    )
    spec = {"name": "Pump", "parent": "instance", "validation": f"{plugin}:no_pumps"}
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.schema.register_node_type("Pump", NodeKind.INSTANCE)
        from cef.store.base import WriteSet

        kb.state.commit(WriteSet(meta={META_PREFIX + "node.Pump": spec}))
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_node(Node(id="p1", label="Pump"))  # declarative checks only: the file is not loaded
        assert not marker.exists()
        memory = SemanticMemory(kb, extractor=None)  # restore_extensions: the memory imports it
        try:
            assert marker.read_text() == "yes"
            with pytest.raises(InvalidPropertyError, match="no pumps here"):
                kb.index_node(Node(id="p2", label="Pump"))
        finally:
            memory.close()


def test_registrations_kept_by_earlier_versions_are_read(tmp_path: Path) -> None:
    from cef.store.base import WriteSet

    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        spec = {
            "name": "patient",
            "parent": "instance",
            "properties": {"mrn": {"type": "string", "required": True}},
        }
        kb.store.apply(WriteSet(meta={LEGACY_PREFIX + "node.patient": spec}))
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        assert kb.schema.kind_of("patient") is NodeKind.INSTANCE
        with pytest.raises(InvalidPropertyError, match="mrn"):
            kb.index_node(Node(id="p", label="patient"))


# ---------------------------------------------------------------------------------------------- round trip
LABEL_NAMES = ["Pump", "Valve", "Event", "TimePoint", "belief", "Sensor_Reading"]
LABELS = st.sampled_from(LABEL_NAMES)
KIND_NAMES = [k.value for k in NodeKind]
KINDS = st.sampled_from(KIND_NAMES)
RELATIONS = st.sampled_from(["FEEDS", "DRAINS", "MEASURES"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), LABELS),
        st.tuples(st.just("declare"), LABELS, KINDS, st.text("abc ", max_size=8)),
        st.tuples(st.just("relation"), RELATIONS, st.sampled_from([None, *LABEL_NAMES])),
    ),
    max_size=12,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_the_registry_round_trips_through_the_store(
    tmp_path_factory: pytest.TempPathFactory, ops: list[Any]
) -> None:
    path = tmp_path_factory.mktemp("reg") / "kb.db"
    placed: dict[str, str] = {}  # declared label -> its parent kind
    with cef.open(path, embedder=None) as kb:
        for i, op in enumerate(ops):
            if op[0] == "write":
                kb.index_node(Node(id=f"n{i}", label=op[1]))
            elif op[0] == "declare":
                _, label, kind, desc = op
                if label in KIND_NAMES and label != kind:
                    with pytest.raises(ValidationError, match="a universal kind is the root"):
                        kb.schema.register_node_type(label, kind)
                    continue
                if label in placed and placed[label] != kind:
                    with pytest.raises(ValidationError, match="cannot move"):
                        kb.schema.register_node_type(label, kind)
                    continue
                kb.schema.register_node_type(label, kind, description=desc)
                placed[label] = kind
            else:
                _, name, target = op
                kb.schema.register_edge_type(name, target_types=[target] if target else None)
        # invariants: every stored label is registered; a declared label's kind is its declaration's
        assert {label for label, _ in kb.store.labels()} <= set(kb.schema.node_types)
        assert {k for k, v in kb.schema.node_types.items() if v.declared} == set(placed)
        for label, kind in placed.items():
            assert kb.schema.kind_of(label) == NodeKind(kind)
        seen = (kb.schema.node_types, kb.schema.edge_types, kb.schema.relation_types)
        kinds = {label: kb.schema.kind_of(label) for label in kb.schema.node_types}
    with cef.open(path, embedder=None) as again:
        assert (again.schema.node_types, again.schema.edge_types, again.schema.relation_types) == seen
        assert {label: again.schema.kind_of(label) for label in again.schema.node_types} == kinds


# ---------------------------------------------------------------------------------------------- the doors
def test_schema_discovery_and_the_tool_descriptions_read_the_registry(kb: cef.KnowledgeBase) -> None:
    kb.schema.register_node_type("Pump", NodeKind.INSTANCE, description="moves water")
    kb.schema.register_node_type("Reservoir", NodeKind.INSTANCE, description="holds water")  # no node yet
    kb.schema.register_edge_type("FEEDS", source_types=["Pump"], target_types=["Reservoir"], description="x")
    kb.index_batch(
        Batch(nodes=[Node(id="p", label="Pump", properties={"name": "P1"}), Node(id="e", label="Event")])
    )
    schema = discover_schema(kb)
    pump, reservoir, event = (schema.node_type(n) for n in ("Pump", "Reservoir", "Event"))
    assert pump is not None and (pump.kind, pump.description, pump.count) == ("instance", "moves water", 1)
    assert reservoir is not None and reservoir.count == 0  # declared vocabulary, before any data
    assert event is not None and event.kind == "event"
    feeds = next(r for r in schema.relation_types if r.name == "FEEDS")
    assert (feeds.source_types, feeds.target_types) == (["Pump"], ["Reservoir"])
    text = describe_schema(schema)
    assert '- Pump [instance]: name; e.g. "P1" — moves water' in text
    assert "FEEDS [ASSOCIATION]: allows Pump → Reservoir" in text
    tools = {d.name: d for d in tool_definitions(schema, ServerSettings())}
    assert "moves water" in tools["retrieve_knowledge"].to_mcp()["description"]
    service = CefService(kb, ServerSettings(graph_timeout_ms=0), context=False)
    try:
        out = anyio.run(lambda: service.call_tool("get_graph_schema", {}, writable=False))
        kinds = {n["label"]: n["kind"] for n in out.model_dump()["node_types"]}
        assert kinds == {"Pump": "instance", "Event": "event", "Reservoir": "instance"}
    finally:
        service.close()


KEYS = {
    "admin-key-0001": ApiKey(access="write"),
    "tenant-a-key-01": ApiKey(access="write", scopes=("tenant-a",)),
    "tenant-b-key-01": ApiKey(access="write", scopes=("tenant-b",)),
}


def test_the_schema_route_reports_a_tenants_labels_only_to_it(kb: cef.KnowledgeBase) -> None:
    kb.register_relation_type(RelationType(name="FEEDS", description="water flows"))
    settings_ = ServerSettings(writable=True, api_keys=KEYS, graph_timeout_ms=0, cache_ttl_seconds=0)
    with TestClient(create_app(kb, settings_, read_only=False)) as api:
        b = {"X-API-Key": "tenant-b-key-01"}
        node = {"id": "tenant-b:x", "label": "Quibbletonol", "scope": "tenant-b"}
        assert api.post("/api/v1/nodes", json=node, headers=b).status_code == 201
        labels = {
            who: [
                n["label"] for n in api.get("/api/v1/schema", headers={"X-API-Key": key}).json()["node_types"]
            ]
            for who, key in (("admin", "admin-key-0001"), ("a", "tenant-a-key-01"), ("b", "tenant-b-key-01"))
        }
        assert "Quibbletonol" in labels["admin"] and "Quibbletonol" in labels["b"]
        assert "Quibbletonol" not in labels["a"]
        assert (
            kb.schema.node_type("Quibbletonol") is not None
        )  # one registry; the route shows what a key sees
    a_view = TenantView(kb, Access(("tenant-a",)))
    with pytest.raises(ForbiddenError, match="registered with other attributes"):
        a_view.index_batch(Batch(relation_types=[RelationType(name="FEEDS", description="mine now")]))
    feeds = kb.schema.relation_type("FEEDS")
    assert feeds is not None
    a_view.index_batch(Batch(relation_types=[feeds]))  # naming it as it is: fine
    assert kb.schema.relation_type("FEEDS").description == "water flows"  # type: ignore[union-attr]
