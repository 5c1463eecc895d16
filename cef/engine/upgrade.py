"""Bring what a store derives from its records up to this cef when the store was written by an older one.

A store keeps, beside each node's record, text derived from it (the node full-text index, see
:func:`cef.store.sql.node_text`). When that derivation changes, a store written before keeps the old
text until its nodes are written again, so a question naming a node by a name the new text holds
would not find it by full text. :func:`refresh_node_text` rewrites every node's derived text once,
through the ordinary write path (one transaction per batch, the change feed and mirrors see it), and
records the version in the store's meta, so it runs once per store.
"""

from __future__ import annotations

import logging

from cef.engine.state import EngineState
from cef.errors import StoreError
from cef.store.base import WriteSet
from cef.store.sql import NODE_TEXT_META, NODE_TEXT_VERSION

__all__ = ["NODE_TEXT_META", "refresh_node_text"]

log = logging.getLogger(__name__)

#: nodes rewritten per transaction
BATCH = 5_000


def refresh_node_text(state: EngineState, *, batch: int = BATCH) -> int:
    """Rewrite every node's derived full-text once if the store's node text is older than this cef's.

    Args:
        state: the engine state whose store is checked (and rewritten through ``state.commit``).
        batch: nodes per transaction; the version is recorded with the last one, so a rewrite cut
            short starts again on the next open.

    Returns:
        How many nodes were rewritten (0 when the store is current or holds no nodes).
    """
    store = state.store
    try:
        version = store.get_meta(NODE_TEXT_META)
    except StoreError:
        return 0
    if version == NODE_TEXT_VERSION:
        return 0
    done = 0
    stamp = {NODE_TEXT_META: NODE_TEXT_VERSION}
    try:
        if version is None and store.counts().get("nodes", 0) == 0:
            state.commit(WriteSet(meta=stamp))  # an empty store from before the stamp (new ones have it)
            return 0
        nodes = sorted(store.iter_nodes(), key=lambda n: n.id)
        size = max(batch, 1)
        for start in range(0, len(nodes), size):
            part = nodes[start : start + size]
            state.commit(WriteSet(updated_nodes=part, meta=stamp if start + size >= len(nodes) else {}))
            done += len(part)
    except StoreError as exc:  # a read-only file, a locked database: answer with the old text
        log.warning(
            "the node full-text index of this knowledge base was written by an older cef and could not be "
            "refreshed (%s); names held in property values may not be found by full text until it is "
            "opened writable once",
            exc,
        )
        return done
    if done:
        log.info(
            "refreshed the node full-text index of %d node(s) (node text version %s)", done, NODE_TEXT_VERSION
        )
    return done
