"""Rich tables for the command line (``cef stats``)."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

__all__ = ["stats_tables"]


def stats_tables(name: str, info: dict[str, Any]) -> list[RenderableType]:
    """``kb.stats()`` as the knowledge base's name and tables: records, node types, relation types."""
    records = Table(title="Records", title_justify="left")
    records.add_column("records")
    records.add_column("count", justify="right")
    for key in ("nodes", "edges", "chunks", "relation_types", "node_vectors", "chunk_vectors"):
        records.add_row(key.replace("_", " "), f"{int(info.get(key) or 0):,}")
    model = info.get("embedding_model")
    records.add_row("embedding", f"{model} ({info.get('embedding_dim')} dims)" if model else "none")

    labels = Table(title="Node types", title_justify="left")
    labels.add_column("label")
    labels.add_column("nodes", justify="right")
    for label, count in sorted(info.get("labels", {}).items(), key=lambda kv: (-kv[1], kv[0])):
        labels.add_row(label, f"{count:,}")

    relations = Table(title="Relation types", title_justify="left")
    relations.add_column("name")
    for rel in info.get("relation_type_names", []):
        relations.add_row(rel)
    return [Text(name, style="bold"), records, labels, relations]
