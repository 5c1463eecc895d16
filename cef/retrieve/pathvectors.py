"""The relation-path scorer's path-text vectors, saved beside the store and read once per engine.

A query in a new process then embeds its question, not the schema's paths (see :func:`path_vectors`).
"""

from __future__ import annotations

import threading
import weakref

from cef.retrieve.ports import EngineView

__all__ = ["path_vectors", "save_path_vectors", "typed_relations"]


#: per engine, how many relation-path text vectors its path scorer held after the last read or
#: save of ``<db>-path-text-vectors`` (see :func:`path_vectors`)
_paths_on_disk: weakref.WeakKeyDictionary[EngineView, int] = weakref.WeakKeyDictionary()
_paths_lock = threading.Lock()


def typed_relations(state: EngineView) -> bool:
    """Whether the schema has relations of its own (beyond the text graph's), i.e. relation paths."""
    from cef.schema.textgraph import TEXT_GRAPH_RELATIONS

    return any(name not in TEXT_GRAPH_RELATIONS for name in state.graph.relations.names)


def path_vectors(state: EngineView, *, embed: int = 0) -> int:
    """Give the relation-path scorer the path-text vectors saved beside the store
    (``<db>-path-text-vectors``, read once per engine), so that a query in a new process embeds
    its question and not the schema's paths. With ``embed`` > 0, the texts of up to that many
    paths the schema allows are embedded now (those not saved yet) and saved. Returns how many
    text vectors the scorer holds (0: no embedder or no typed relations). Call it while holding
    ``state.reading()``."""
    from cef.retrieve.pathscore import path_scorer

    emb = state.embedder
    if emb is None or not typed_relations(state):
        return 0
    scorer = path_scorer(state)
    saved = state.vectors_path("path-text")
    with _paths_lock:
        if state not in _paths_on_disk:
            _paths_on_disk[state] = scorer.load_vectors(saved, emb.name) if saved is not None else 0
    if embed > 0:
        scorer.prepare(lambda texts: emb.embed(list(texts)), limit=embed)
        save_path_vectors(state)
    return len(scorer.vectors)


def save_path_vectors(state: EngineView) -> bool:
    """Save the path-text vectors beside the store when the scorer holds more than were read or
    saved last (questions embed the paths they reach that were not saved); False: nothing to do."""
    from cef.retrieve.pathscore import path_scorer

    emb, saved = state.embedder, state.vectors_path("path-text")
    with _paths_lock:
        known = _paths_on_disk.get(state)
    if emb is None or saved is None or known is None:
        return False  # this engine never read them: nothing of the scorer's came from or goes to disk
    with state.reading():
        scorer = path_scorer(state)
    held = len(scorer.vectors)
    if held <= known or not scorer.save_vectors(saved, emb.name):
        return False
    with _paths_lock:
        _paths_on_disk[state] = held
    return True
