"""``kb.schema`` on each record store: registrations persist, reach another process's knowledge base
through the change feed, and a refused write registers nothing (a real PostgreSQL server)."""

from __future__ import annotations

from pathlib import Path

import pytest

import cef
from cef import Batch, Edge, Node
from cef.errors import InvalidPropertyError, UnknownRelationTypeError
from cef.schema.kinds import NodeKind
from cef.schema.registry import META_PREFIX
from tests.support.pg import PgServer, pg_dsn, pg_server  # noqa: F401  (fixtures)


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "kb.db")
    return str(request.getfixturevalue("pg_dsn"))


def test_the_registry_is_shared_and_persisted_by_the_store(url: str) -> None:
    with cef.open(url, embedder=None) as one, cef.open(url, embedder=None) as two:
        one.schema.register_node_type("Pump", NodeKind.INSTANCE, {"bar": "float"}, description="moves water")
        one.schema.register_edge_type("FEEDS", source_types=["Pump"], description="water flows")
        one.index_batch(Batch(nodes=[Node(id="p", label="Pump"), Node(id="e", label="Event")]))
        assert two.find_node("p") is not None  # a read catches up with the other's commits
        assert two.schema.node_type("Pump").description == "moves water"  # type: ignore[union-attr]
        assert two.schema.kind_of("Event") is NodeKind.EVENT
        assert two.schema.relation_type("FEEDS").source_types == ["Pump"]  # type: ignore[union-attr]
        with pytest.raises(InvalidPropertyError, match="property 'bar': expected float"):
            two.index_node(Node(id="p2", label="Pump", properties={"bar": "high"}))
        meta = one.store.meta_items(META_PREFIX)
        with pytest.raises(UnknownRelationTypeError, match="'DRAINS'"):
            two.index_batch(
                Batch(
                    nodes=[Node(id="v", label="Valve")],
                    edges=[Edge(relation_type="DRAINS", source="p", target="v")],
                )
            )
        assert one.store.meta_items(META_PREFIX) == meta and two.schema.node_type("Valve") is None
    with cef.open(url, embedder=None) as again:
        assert again.schema.node_type("Pump").declared  # type: ignore[union-attr]
        assert again.schema.node_type("Event") is not None
