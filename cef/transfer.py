"""Move a whole knowledge base between backends as JSON Lines, exactly.

:func:`export_kb` writes every relation type, node (with its vector), edge,
chunk (with its vector) and meta entry of a record store; :func:`import_kb`
writes such a file into an empty store. Records keep their insertion order,
vectors travel as base64 little-endian float32 (bit-exact), and the output
is deterministic, so export → import → export gives identical bytes whatever
the two backends are. The file, one JSON object per line::

    {"cef_export": 1, "counts": {...}, "embedding": {"model": ..., "dim": ...}}
    {"meta": "ingest.docs/a.md", "value": {...}}          sorted by key
    {"relation_type": {...}}                              sorted by name
    {"node": {...}, "vector": "AAAgQQ..." | null}         insertion order
    {"edge": {...}}
    {"chunk": {...}, "vector": "..." | null}

Indexes are not exported: full text is derived, and vector or graph mirrors
(Qdrant, DuckDB, FalkorDB, Neo4j) are rebuilt from the record store the next
time a knowledge base opens with them.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from cef.errors import ConfigurationError, ParseError
from cef.model import Chunk, Edge, Node, RelationType
from cef.store.base import RecordStore, WriteSet

__all__ = ["FORMAT_VERSION", "TransferStats", "export_kb", "import_kb"]

FORMAT_VERSION = 1
#: meta keys that belong to a backend, not to the knowledge base
INTERNAL_META = frozenset({"schema_version", "instance_id"})

Progress = Callable[[str, int, int], None]


@dataclass
class TransferStats:
    """What an export or import moved."""

    relation_types: int = 0
    nodes: int = 0
    edges: int = 0
    chunks: int = 0
    vectors: int = 0
    meta: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def _vec_out(v: np.ndarray | None) -> str | None:
    if v is None:
        return None
    return base64.b64encode(np.ascontiguousarray(v, dtype="<f4").tobytes()).decode("ascii")


def _vec_in(text: str | None) -> np.ndarray | None:
    if text is None:
        return None
    raw = base64.b64decode(text, validate=True)  # binascii.Error is a ValueError
    if len(raw) % 4:
        raise ValueError(f"vector has {len(raw)} bytes, not a whole number of float32")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# ---------------------------------------------------------------------- export
def export_kb(
    store: RecordStore, out: str | Path | IO[str], *, batch_size: int = 5000, progress: Progress | None = None
) -> TransferStats:
    """Write every record of ``store`` to ``out`` (a path or a text stream)."""
    if isinstance(out, str | Path):
        with open(out, "w", encoding="utf-8", newline="\n") as fh:
            return export_kb(store, fh, batch_size=batch_size, progress=progress)
    t0 = time.perf_counter()
    stats = TransferStats()
    counts = store.counts()
    meta = [(k, v) for k, v in store.meta_items("") if k not in INTERNAL_META]
    header = {
        "cef_export": FORMAT_VERSION,
        "counts": {k: counts[k] for k in ("relation_types", "nodes", "edges", "chunks")},
        "embedding": {"model": store.get_meta("embedding.model"), "dim": store.get_meta("embedding.dim")},
    }
    out.write(_line(header))
    for key, value in sorted(meta):
        out.write(_line({"meta": key, "value": value}))
        stats.meta += 1
    for rt in sorted(store.relation_types(), key=lambda r: r.name):
        out.write(_line({"relation_type": rt.model_dump(mode="json")}))
        stats.relation_types += 1
    for nodes in _batches(store.iter_nodes(), batch_size):
        vecs = store.get_vectors("node", [n.id for n in nodes])
        for n in nodes:
            v = vecs.get(n.id)
            stats.vectors += v is not None
            out.write(_line({"node": n.model_dump(mode="json"), "vector": _vec_out(v)}))
        stats.nodes += len(nodes)
        if progress is not None:
            progress("exporting nodes", stats.nodes, counts["nodes"])
    for edges in _batches(store.iter_edges(), batch_size):
        for e in edges:
            out.write(_line({"edge": e.model_dump(mode="json")}))
        stats.edges += len(edges)
        if progress is not None:
            progress("exporting edges", stats.edges, counts["edges"])
    for chunks in _batches(store.iter_chunks(), batch_size):
        vecs = store.get_vectors("chunk", [c.id for c in chunks])
        for c in chunks:
            v = vecs.get(c.id)
            stats.vectors += v is not None
            out.write(_line({"chunk": c.model_dump(mode="json"), "vector": _vec_out(v)}))
        stats.chunks += len(chunks)
        if progress is not None:
            progress("exporting chunks", stats.chunks, counts["chunks"])
    stats.seconds = time.perf_counter() - t0
    return stats


# ---------------------------------------------------------------------- import
class _Reader:
    def __init__(self, src: IO[str], name: str) -> None:
        self.src = src
        self.name = name
        self.line = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for text in self.src:
            self.line += 1
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except ValueError as exc:
                raise ParseError(f"not JSON: {exc}", file=self.name, line=self.line) from exc
            if not isinstance(obj, dict):
                raise ParseError("each line must be a JSON object", file=self.name, line=self.line)
            yield obj

    def fail(self, message: str) -> ParseError:
        return ParseError(message, file=self.name, line=self.line)


def import_kb(
    store: RecordStore,
    src: str | Path | IO[str],
    *,
    batch_size: int = 5000,
    progress: Progress | None = None,
) -> TransferStats:
    """Write an export file into ``store``, which must be empty.

    Records are written in transactions of ``batch_size``; if the import
    fails part-way (a malformed line, a lost connection), the error names the
    line and the store holds what was written before it: empty it and retry.
    """
    if isinstance(src, str | Path):
        with open(src, encoding="utf-8") as fh:
            return import_kb(store, fh, batch_size=batch_size, progress=progress)
    t0 = time.perf_counter()
    present = {k: v for k, v in store.counts().items() if v}
    if present:
        raise ConfigurationError(
            f"import needs an empty knowledge base; this one holds {present}: use a new database or file"
        )
    reader = _Reader(src, str(getattr(src, "name", "<stream>")))
    stats = TransferStats()
    rows = iter(reader)
    header = next(rows, None)
    if header is None or header.get("cef_export") != FORMAT_VERSION:
        raise reader.fail(f"not a cef export (version {FORMAT_VERSION}): the first line must be its header")
    total = header.get("counts", {})
    pending = WriteSet()
    phase = "meta"
    order = ("meta", "relation_type", "node", "edge", "chunk")

    def flush() -> None:
        nonlocal pending
        if not pending.is_empty():
            store.apply(pending)
        pending = WriteSet()

    for obj in rows:
        kind = next((k for k in order if k in obj), None)
        if kind is None:
            raise reader.fail(f"unknown record: expected one of {', '.join(order)}")
        if order.index(kind) < order.index(phase):
            raise reader.fail(
                f"a {kind} after the {phase}s: records must come in the order {', '.join(order)}"
            )
        if kind != phase:
            flush()
            if progress is not None and phase in ("node", "edge", "chunk"):
                progress(f"importing {phase}s", getattr(stats, phase + "s"), int(total.get(phase + "s", 0)))
            phase = kind
        try:
            if kind == "meta":
                pending.meta[str(obj["meta"])] = obj["value"]
                stats.meta += 1
            elif kind == "relation_type":
                pending.relation_types.append(RelationType.model_validate(obj["relation_type"]))
                stats.relation_types += 1
            elif kind == "node":
                node = Node.model_validate(obj["node"])
                pending.nodes.append(node)
                vec = _vec_in(obj.get("vector"))
                if vec is not None:
                    pending.node_vectors[node.id] = vec
                    stats.vectors += 1
                stats.nodes += 1
            elif kind == "edge":
                pending.edges.append(Edge.model_validate(obj["edge"]))
                stats.edges += 1
            else:
                chunk = Chunk.model_validate(obj["chunk"])
                pending.chunks.append(chunk)
                vec = _vec_in(obj.get("vector"))
                if vec is not None:
                    pending.chunk_vectors[chunk.id] = vec
                    stats.vectors += 1
                stats.chunks += 1
        except (KeyError, TypeError, ValueError) as exc:
            raise reader.fail(f"invalid {kind}: {exc}") from exc
        size = len(pending.nodes) + len(pending.edges) + len(pending.chunks)
        if size >= batch_size:
            flush()
            if progress is not None:
                progress(f"importing {phase}s", getattr(stats, phase + "s"), int(total.get(phase + "s", 0)))
    flush()
    if progress is not None and phase in ("node", "edge", "chunk"):
        progress(f"importing {phase}s", getattr(stats, phase + "s"), int(total.get(phase + "s", 0)))
    stats.seconds = time.perf_counter() - t0
    return stats
