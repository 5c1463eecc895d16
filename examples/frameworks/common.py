"""What both framework examples share: the command line, and the clinical knowledge base they retrieve from.

Without ``--db`` or ``--server`` an example ingests ``examples/clinical/graph.yaml``
into a temporary file (what ``cef ingest`` does) and removes it when done.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import cef
from cef.ingest.pipeline import ingest_sources

GRAPH = Path(__file__).resolve().parents[1] / "clinical" / "graph.yaml"
QUESTION = "Which drugs interact with the medication John Miller takes?"


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("question", nargs="?", default=QUESTION)
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--db", help="a knowledge base file or postgresql:// URL (default: the clinical example)"
    )
    where.add_argument("--server", help="the URL of a running `cef serve http`")
    parser.add_argument("--api-key", help="the server's API key (read scope)")
    parser.add_argument(
        "--embedder", default="default", help="'default' (offline MiniLM) or 'none' (graph + BM25)"
    )
    parser.add_argument("--strategy", default="paths", help="auto, hybrid, vector, bm25, graph, ppr, paths")
    parser.add_argument("--depth", type=int, default=2, help="graph traversal depth")
    parser.add_argument("-k", type=int, default=4, help="how many passages to retrieve")
    return parser.parse_args()


@contextlib.contextmanager
def knowledge_base(args: argparse.Namespace) -> Iterator[str]:
    """What to hand a retriever: the server URL, the --db given, or the clinical example in a temporary file."""
    if args.server:
        yield args.server
        return
    if args.db:
        yield args.db
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "clinical.db"
        with cef.open(path, embedder=embedder(args)) as kb:
            report = ingest_sources(kb, [str(GRAPH)])
            failed = [o for o in report.outcomes if o.status == "failed"]
            if failed:
                raise SystemExit(f"error: could not ingest {GRAPH.name}: {failed[0].message}")
        yield str(path)


def embedder(args: argparse.Namespace) -> str | None:
    return None if args.embedder == "none" else args.embedder
