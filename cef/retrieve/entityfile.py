"""The entity index of a big graph saved beside the store: the first query after an open reads it.

Building :class:`~cef.retrieve.ppr.EntityIndex` reads every entity's record,
every MENTIONS edge and every passage's chunk list from the store, then indexes
every name (seconds per 100K passages). It depends only on the graph, so it is
written once built, next to the graph snapshot (``<db>-entities``, one
uncompressed ``.npz``: numpy arrays, strings joined by NUL), and a later
process whose graph is in the same state loads it instead: a few large reads
and dictionaries rebuilt from arrays, no store reads and no name normalizing.

Like the graph snapshot it is a cache, never the system of record. Its header
names the store instance, the change-feed position and the graph's node and
edge counts, with a fingerprint of sampled node and edge ids (the index holds
graph *positions*, which are only meaningful for the graph they were taken
from). Anything that does not match — another database, a later or earlier
state, another load order, a format change, an unreadable file — and the
index is rebuilt from the store (and saved again).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.extract.resolve import NameResolver, _Entry
from cef.extract.spacy_ner import Gazetteer, GazetteerEntry
from cef.graph.arrays import Ragged, RaggedStrings, RowMap, SortedIndex, pack_strings, unpack_strings

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.retrieve.entityindex import EntityIndex

__all__ = ["ENTITY_FILE_FORMAT", "graph_fingerprint", "load_entity_index", "save_entity_index"]

log = logging.getLogger(__name__)

#: bump when the arrays or their meaning change: older files are then rebuilt
ENTITY_FILE_FORMAT = 6  # 4: a curated node that text mentions is in the gazetteer by its aliases; 5: and its naming property values; 6: only those that tell it apart
_TSEP = "\x1f"  # between the types of one name
_SAMPLES = 1024


class _Unsavable(ValueError):
    """A string holds a separator character: this index is not written."""


def _pack(items: list[str]) -> np.ndarray:
    return pack_strings(items, _Unsavable)


def _unpack(data: np.ndarray, count: int) -> list[str]:
    return unpack_strings(data, count)


def _ptr(lengths: list[int]) -> np.ndarray:
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=ptr[1:])
    return ptr


def graph_fingerprint(g: GraphIndex) -> str:
    """Counts and a hash of evenly sampled node and edge ids (positions match when this does)."""
    h = hashlib.blake2b(digest_size=16)
    for ids in (g.node_ids, g.edge_ids):
        n = len(ids)
        h.update(str(n).encode())
        step = max(1, n // _SAMPLES)
        for i in [*range(0, n, step), n - 1] if n else []:
            h.update(ids[i].encode("utf-8", "surrogatepass"))
            h.update(b"\x00")
    return h.hexdigest()


# ----------------------------------------------------------------------------- saving
def _gazetteer_arrays(gaz: Gazetteer) -> dict[str, np.ndarray]:
    keys = list(gaz._entries)
    entries = [e for k in keys for e in gaz._entries[k]]
    type_names = sorted({e.type for e in entries})
    code = {t: i for i, t in enumerate(type_names)}
    return {
        "gaz_keys": _pack(keys),
        "gaz_ptr": _ptr([len(gaz._entries[k]) for k in keys]),
        "gaz_names": _pack([e.name for e in entries]),
        "gaz_types": _pack(type_names),
        "gaz_type": np.asarray([code[e.type] for e in entries], dtype=np.int32),
        "gaz_refs": _pack([e.ref or "" for e in entries]),
        "gaz_has_ref": np.asarray([e.ref is not None for e in entries], dtype=np.bool_),
        "gaz_max_words": np.asarray([gaz._max_words], dtype=np.int64),
        "gaz_require_capital": np.asarray([gaz.require_capital], dtype=np.bool_),
        "gaz_min_chars": np.asarray([gaz.min_chars], dtype=np.int64),
    }


def _resolver_arrays(res: NameResolver) -> dict[str, np.ndarray]:
    entries = list(res._entries.values())
    at = {e.node_id: i for i, e in enumerate(entries)}
    for e in res._keys.values():  # a key can still point at an entry a later add replaced
        if e.node_id not in at:
            at[e.node_id] = len(entries)
            entries.append(e)
    words = list(res._words)
    members = [sorted(res._words[w]) for w in words]
    return {
        "res_ids": _pack([e.node_id for e in entries]),
        "res_labels": _pack([e.label for e in entries]),
        "res_curated": np.asarray([e.curated for e in entries], dtype=np.bool_),
        "res_types": _pack([_TSEP.join(e.types) for e in entries]),
        "res_in_entries": np.asarray([i < len(res._entries) for i in range(len(entries))], dtype=np.bool_),
        "res_keys": _pack(list(res._keys)),
        "res_key_entry": np.asarray([at[e.node_id] for e in res._keys.values()], dtype=np.int64),
        "res_curated_keys": _pack(list(res._curated_keys)),
        "res_words": _pack(words),
        "res_word_ptr": _ptr([len(m) for m in members]),
        "res_word_members": np.asarray([at[n] for m in members for n in m], dtype=np.int64),
        "res_cutoff": np.asarray([res.fuzzy_cutoff], dtype=np.float64),
    }


def save_entity_index(index: EntityIndex, path: Path, header: dict[str, Any]) -> bool:
    """Write ``index`` to ``path`` atomically; False (logged) when it cannot be written."""
    try:
        arrays = _index_arrays(index)
    except _Unsavable as exc:
        log.info("entity index not saved: %s", exc)
        return False
    head = {**header, "format": ENTITY_FILE_FORMAT, "counts": _counts(index)}
    arrays["header"] = np.frombuffer(json.dumps(head).encode("utf-8"), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        log.warning("could not write the entity index %s: %s", path, exc)
        return False
    return True


def _counts(index: EntityIndex) -> dict[str, int]:
    return {
        "names": len(index.names),
        "types": len(index.types),
        "keys": len(index.key_index),
        "passages": len(index.passages),
        "entity_lists": (
            int(index.passage_entities.ptr[-1])
            if isinstance(index.passage_entities, Ragged)
            else sum(len(a) for a in index.passage_entities)
        ),
        "titles": len(index.title_owners),
        "chunks": len(index.chunk_ids),
    }


def _ragged(rows: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    if isinstance(rows, Ragged):
        return {"pe_flat": rows.flat.astype(np.int64), "pe_ptr": rows.ptr}
    flat = np.concatenate(list(rows)).astype(np.int64) if len(rows) else np.zeros(0, dtype=np.int64)
    return {"pe_flat": flat, "pe_ptr": _ptr([len(a) for a in rows])}


def _index_arrays(index: EntityIndex) -> dict[str, np.ndarray]:
    names_pos = np.fromiter(index.names, dtype=np.int64, count=len(index.names))
    types_pos = np.fromiter(index.types, dtype=np.int64, count=len(index.types))
    title_keys = np.fromiter(index.title_owners, dtype=np.int64, count=len(index.title_owners))
    title_lists = [index.title_owners[int(k)] for k in title_keys]
    out: dict[str, np.ndarray] = {
        "names_pos": names_pos,
        "names": _pack([index.names[int(p)] for p in names_pos]),
        "types_pos": types_pos,
        "types": _pack([_TSEP.join(index.types[int(p)]) for p in types_pos]),
        "key_index_keys": _pack(list(index.key_index)),
        "key_index_pos": np.fromiter(index.key_index.values(), dtype=np.int64, count=len(index.key_index)),
        "title_keys": title_keys,
        "title_ptr": _ptr([len(x) for x in title_lists]),
        "title_flat": np.asarray([o for x in title_lists for o in x], dtype=np.int64),
        **_gazetteer_arrays(index.gazetteer),
        **_resolver_arrays(index.resolver),
    }
    if index.matrix is not None:
        m = index.matrix.tocsr()
        out |= {
            "m_indptr": m.indptr,
            "m_indices": m.indices,
            "m_data": m.data,
            "m_shape": np.asarray(m.shape, dtype=np.int64),
            "passages": index.passages,
            **_ragged(index.passage_entities),
            "df": index.df,
            "ent_ptr": index.ent_ptr,
            "ent_passage": index.ent_passage,
            "ent_weight": index.ent_weight,
            "ent_edge": index.ent_edge,
            "chunk_ids": _pack(index.chunk_ids),
            "chunk_passage": index.chunk_passage,
            "pc_ptr": (
                index.passage_chunks.ptr
                if isinstance(index.passage_chunks, RaggedStrings)
                else _ptr([len(cs) for cs in index.passage_chunks])
            ),
        }
    return out


# ----------------------------------------------------------------------------- loading
def read_header(path: Path) -> dict[str, Any]:
    """The header of a saved index (OSError / ValueError / KeyError when unusable)."""
    try:
        with path.open("rb") as f, np.load(f) as data:
            head: dict[str, Any] = json.loads(data["header"].tobytes().decode("utf-8"))
    except zipfile.BadZipFile as exc:
        raise ValueError(f"entity index {path} is not a complete file: {exc}") from exc
    return head


def _split_types(text: str) -> list[str]:
    return text.split(_TSEP) if text else []


def _gazetteer(d: Any) -> Gazetteer:
    """The saved gazetteer; a key's entries are made when the key is looked up (:class:`RowMap`)."""
    gaz = Gazetteer(require_capital=bool(d["gaz_require_capital"][0]), min_chars=int(d["gaz_min_chars"][0]))
    ptr = d["gaz_ptr"]
    keys = _unpack(d["gaz_keys"], len(ptr) - 1)
    n = int(ptr[-1])
    type_names = _unpack(d["gaz_types"], _count(d["gaz_types"]))
    type_of, has_ref = d["gaz_type"], d["gaz_has_ref"]
    names, refs = _unpack(d["gaz_names"], n), _unpack(d["gaz_refs"], n)
    if len(type_of) != n or len(has_ref) != n:
        raise ValueError(f"gazetteer arrays of {len(type_of)} / {len(has_ref)} entries, expected {n}")

    def entries(row: int) -> list[GazetteerEntry]:
        return [
            GazetteerEntry(names[j], type_names[int(type_of[j])], refs[j] if has_ref[j] else None)
            for j in range(int(ptr[row]), int(ptr[row + 1]))
        ]

    gaz._entries = RowMap(dict(zip(keys, range(len(keys)), strict=True)), entries)
    gaz._max_words = int(d["gaz_max_words"][0])
    return gaz


def _resolver(d: Any) -> NameResolver:
    n = len(d["res_curated"])
    ids = _unpack(d["res_ids"], n)
    labels = _unpack(d["res_labels"], n)
    types = [tuple(_split_types(t)) for t in _unpack(d["res_types"], n)]
    entries = [
        _Entry(i, lb, c, t) for i, lb, c, t in zip(ids, labels, d["res_curated"].tolist(), types, strict=True)
    ]
    res = NameResolver(fuzzy_cutoff=float(d["res_cutoff"][0]))
    res._entries = {
        e.node_id: e for e, keep in zip(entries, d["res_in_entries"].tolist(), strict=True) if keep
    }
    key_entry = d["res_key_entry"].tolist()
    res._keys = {
        k: entries[i] for k, i in zip(_unpack(d["res_keys"], len(key_entry)), key_entry, strict=True)
    }
    ptr = d["res_word_ptr"]
    curated = _unpack(d["res_curated_keys"], _count(d["res_curated_keys"]))
    res._curated_keys = dict.fromkeys(curated)
    members = d["res_word_members"].tolist()
    bounds = ptr.tolist()
    res._words = {
        w: {ids[m] for m in members[bounds[i] : bounds[i + 1]]}
        for i, w in enumerate(_unpack(d["res_words"], len(ptr) - 1))
    }
    return res


def _count(packed: np.ndarray) -> int:
    """How many strings a packed array holds (an empty array: none; strings are never all empty)."""
    return 0 if not len(packed) else int(np.count_nonzero(packed == 0)) + 1


def load_entity_index(path: Path, stamp: tuple[int, int]) -> tuple[EntityIndex, dict[str, Any]]:
    """The index saved at ``path`` and its header (OSError / ValueError / KeyError when unusable)."""
    from scipy import sparse

    from cef.graph.push import PushGraph
    from cef.retrieve.entityindex import EntityIndex

    with path.open("rb") as f, np.load(f) as d:
        head = json.loads(d["header"].tobytes().decode("utf-8"))
        if head.get("format") != ENTITY_FILE_FORMAT:
            raise ValueError(
                f"entity index {path} has format {head.get('format')}, expected {ENTITY_FILE_FORMAT}"
            )
        counts = head["counts"]
        names_pos = d["names_pos"].tolist()
        types_pos = d["types_pos"].tolist()
        key_pos = d["key_index_pos"].tolist()
        types = _unpack(d["types"], len(types_pos))
        title_keys = d["title_keys"].tolist()
        tb, tflat = d["title_ptr"], d["title_flat"]
        index = EntityIndex(
            stamp=stamp,
            gazetteer=_gazetteer(d),
            key_index=dict(zip(_unpack(d["key_index_keys"], len(key_pos)), key_pos, strict=True)),
            names=dict(zip(names_pos, _unpack(d["names"], len(names_pos)), strict=True)),
            types=RowMap(
                dict(zip(types_pos, range(len(types_pos)), strict=True)), lambda i: _split_types(types[i])
            ),
            from_file=True,
        )
        res = {k: d[k] for k in d.files if k.startswith("res_")}  # the resolver is made on first use
        index._resolver_from = lambda: _resolver(res)
        index.title_owners = RowMap(
            dict(zip(title_keys, range(len(title_keys)), strict=True)),
            lambda i: tflat[int(tb[i]) : int(tb[i + 1])].tolist(),
        )
        if "m_indptr" in d.files:
            shape = tuple(int(x) for x in d["m_shape"])
            index.matrix = sparse.csr_matrix((d["m_data"], d["m_indices"], d["m_indptr"]), shape=shape)
            index.push = PushGraph.from_matrix(index.matrix)
            index.passages = d["passages"]
            index.passage_index = SortedIndex(index.passages)
            index.passage_entities = Ragged(d["pe_flat"], d["pe_ptr"])
            index.df = d["df"]
            index.ent_ptr = d["ent_ptr"]
            index.ent_passage = d["ent_passage"]
            index.ent_weight = d["ent_weight"]
            index.ent_edge = d["ent_edge"]
            pc = d["pc_ptr"]
            index.chunk_ids = _unpack(d["chunk_ids"], int(pc[-1]))
            index.chunk_passage = d["chunk_passage"]
            index.passage_chunks = RaggedStrings(index.chunk_ids, pc)
    if _counts(index) != counts:
        raise ValueError(
            f"entity index {path} is inconsistent (header counts {counts}, read {_counts(index)})"
        )
    return index, head
