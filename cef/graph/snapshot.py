"""Binary snapshots of a :class:`~cef.graph.index.GraphIndex`: open a big graph in seconds.

Loading a graph of millions of edges from the record store means reading every
edge row through SQL and turning it into Python values (about 40 s at 1M nodes /
5M edges). A snapshot is the compacted index itself — its numpy arrays, its id
lists and its string tables — written to one uncompressed ``.npz`` file; loading
it is a few large reads. The snapshot is a cache, never the system of record:
its header names the store instance and the change-feed position it reflects,
and :class:`~cef.engine.state.EngineState` replays the commits made after that
position, or ignores the snapshot (full load) when it cannot prove it current.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from cef.graph.arrays import pack_strings, unpack_strings
from cef.graph.index import GraphIndex

__all__ = ["SNAPSHOT_FORMAT", "SnapshotError", "read_snapshot", "write_snapshot"]

#: bump when the arrays or their meaning change: older snapshots are then ignored
SNAPSHOT_FORMAT = 1


_ARRAYS = (
    "node_label",
    "node_scope",
    "node_alive",
    "e_src",
    "e_dst",
    "e_rel",
    "e_weight",
    "e_conf",
    "e_from",
    "e_to",
    "e_rec",
    "e_tx_end",
    "e_scope",
    "e_alive",
)
_CSR = ("_out_ptr", "_out_e", "_in_ptr", "_in_e")


class SnapshotError(Exception):
    """A snapshot that cannot be written or read (the caller falls back to a full load)."""


def _join(ids: list[str]) -> np.ndarray:
    return pack_strings(ids, SnapshotError)


def _split(blob: np.ndarray, count: int) -> list[str]:
    return unpack_strings(blob, count, SnapshotError)


def write_snapshot(graph: GraphIndex, path: Path, header: dict[str, Any]) -> int:
    """Write ``graph`` (compacted first) with ``header`` to ``path`` atomically; returns bytes written.

    The file is written next to ``path`` and renamed over it, so a reader sees
    the old snapshot or the new one, never a torn file.
    """
    graph.compact()
    head = {
        **header,
        "format": SNAPSHOT_FORMAT,
        "nodes": len(graph.node_ids),
        "edges": len(graph.edge_ids),
        "labels": graph.labels.names,
        "scopes": graph.scopes.names,
        "relations": graph.relations.names,
        "has_tx_end": graph._has_tx_end,
    }
    arrays: dict[str, np.ndarray] = {name: getattr(graph, name).view for name in _ARRAYS}
    arrays.update({name.lstrip("_"): getattr(graph, name) for name in _CSR})
    arrays["node_ids"] = _join(graph.node_ids)
    arrays["edge_ids"] = _join(graph.edge_ids)
    arrays["header"] = np.frombuffer(json.dumps(head).encode("utf-8"), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path.stat().st_size


def read_header(path: Path) -> dict[str, Any]:
    """The header of a snapshot file, without reading its arrays."""
    try:
        with zipfile.ZipFile(path) as z, z.open("header.npy") as f:
            blob = np.lib.format.read_array(f)
        head: dict[str, Any] = json.loads(blob.tobytes().decode("utf-8"))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise SnapshotError(f"unreadable graph snapshot {path}: {exc}") from exc
    if head.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(
            f"graph snapshot {path} has format {head.get('format')}, expected {SNAPSHOT_FORMAT}"
        )
    return head


def read_snapshot(path: Path) -> tuple[GraphIndex, dict[str, Any]]:
    """The graph index and header stored at ``path`` (relation metadata is set by the caller)."""
    head = read_header(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise SnapshotError(f"unreadable graph snapshot {path}: {exc}") from exc
    g = GraphIndex()
    n_nodes, n_edges = int(head["nodes"]), int(head["edges"])
    for name in _ARRAYS:
        arr = arrays[name]
        expected = n_nodes if name.startswith("node_") else n_edges
        if len(arr) != expected:
            raise SnapshotError(f"graph snapshot {path}: {name} has {len(arr)} rows, expected {expected}")
        getattr(g, name).adopt(arr)
    for name in _CSR:
        setattr(g, name, arrays[name.lstrip("_")])
    if len(g._out_ptr) != n_nodes + 1 or len(g._in_ptr) != n_nodes + 1:
        raise SnapshotError(f"graph snapshot {path}: adjacency does not match {n_nodes} nodes")
    g._csr_nodes, g._csr_edges = n_nodes, n_edges
    for interner, names in (
        (g.labels, head["labels"]),
        (g.scopes, head["scopes"]),
        (g.relations, head["relations"]),
    ):
        for name in names:
            interner.code(name)
    g._has_tx_end = bool(head["has_tx_end"])

    g.node_ids = _split(arrays["node_ids"], n_nodes)
    node_alive = g.node_alive.view
    if node_alive.all():
        g._node_pos = dict(zip(g.node_ids, range(n_nodes), strict=True))
    else:
        live = np.flatnonzero(node_alive)
        g._node_pos = dict(
            zip(itertools.compress(g.node_ids, node_alive.tolist()), live.tolist(), strict=True)
        )
    g.edge_ids = _split(arrays["edge_ids"], n_edges)
    g._edge_pos_map = None  # edge id -> position: made on first use (queries address edges by position)
    g._live_nodes = len(g._node_pos)
    g._live_edges = int(np.count_nonzero(g.e_alive.view))
    g.generation += 1
    return g, head
