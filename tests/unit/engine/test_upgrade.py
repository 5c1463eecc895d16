"""A store written by an older cef gets its node full-text index made current once, on open
(:func:`cef.engine.upgrade.refresh_node_text`): a node's short naming property values ("Eliquis")
joined its names after such stores were written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import cef
from cef import Batch, Node
from cef.engine.upgrade import NODE_TEXT_META, refresh_node_text
from cef.store.sql import NODE_TEXT_VERSION


def _write(path: Path) -> None:
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(
            Batch(
                nodes=[
                    Node(
                        id="apixaban", label="Medication", properties={"name": "Apixaban", "brand": "Eliquis"}
                    ),
                    Node(id="warfarin", label="Medication", properties={"name": "Warfarin"}),
                ]
            )
        )


def _age(path: Path) -> None:
    """Make the file look written before value names: the node text without them, no version."""
    conn = sqlite3.connect(path)
    with conn:
        rows = conn.execute("SELECT rid, id, label FROM nodes").fetchall()
        conn.execute("DELETE FROM node_fts")
        for rid, nid, label in rows:
            conn.execute("INSERT INTO node_fts(rowid, text) VALUES (?, ?)", (rid, f"{nid.title()} {label}"))
        conn.execute("DELETE FROM meta WHERE key=?", (NODE_TEXT_META,))
    conn.close()


def _found(kb: cef.KnowledgeBase, text: str) -> list[str]:
    return [hit.id for hit in kb.store.search_text("node", text, 5)]


def test_a_new_store_is_stamped_current(tmp_path: Path) -> None:
    _write(tmp_path / "kb.db")
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        assert kb.store.get_meta(NODE_TEXT_META) == NODE_TEXT_VERSION
        assert _found(kb, "Eliquis") == ["apixaban"]


def test_an_old_stores_node_text_is_rewritten_once_on_open(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    _write(path)
    _age(path)
    with cef.open(path, embedder=None) as kb:  # opening rewrites the node text
        assert kb.store.get_meta(NODE_TEXT_META) == NODE_TEXT_VERSION
        assert _found(kb, "Eliquis") == ["apixaban"]
        assert _found(kb, "Warfarin") == ["warfarin"]
        assert kb.stats()["nodes"] == 2
        assert refresh_node_text(kb.state) == 0  # once: the version is recorded


def test_a_rewrite_in_batches_stamps_the_version_with_its_last_batch(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    _write(path)
    with cef.open(path, embedder=None) as kb:
        _age(path)
        assert kb.store.get_meta(NODE_TEXT_META) is None
        assert _found(kb, "Eliquis") == []
        assert refresh_node_text(kb.state, batch=1) == 2
        assert kb.store.get_meta(NODE_TEXT_META) == NODE_TEXT_VERSION
        assert _found(kb, "Eliquis") == ["apixaban"]
