"""Crashes and concurrent writers on one knowledge base (SQLite; the two-writer tests on PostgreSQL too).

* ``cef ingest`` is SIGKILLed at seeded random moments (over a folder of
  files, and over one large JSON Lines file committed in parts). After every
  kill the file passes ``PRAGMA integrity_check``, is referentially
  consistent (no edge to a missing node, no chunk linked to a missing node),
  every record written is listed by a manifest entry (a file's header or one
  of its committed parts) and every record listed exists, and a file whose
  header says complete holds all of it (a JSON Lines file: one chunk per
  line). Kills land between the parts of the large file (an incomplete file
  with committed parts is seen); re-ingesting resumes it and converges to the
  same nodes, edges and chunks as one clean ingest.
* Two ``cef ingest`` processes write one store at once; then a writable
  ``cef serve http`` and a CLI ingest write one store at once, on SQLite (one
  file) and on PostgreSQL (one schema). Every write is present afterwards,
  nothing dangles, and the server sees the other process's writes.

Figures (kills, writers, writes) are printed for docs/reliability.md.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import cef
from tests.conftest import clinical_batch
from tests.support.pg import pg_dsn, pg_server  # noqa: F401 (fixtures)

CEF = str(Path(sys.executable).parent / "cef")
SEED = 1725
KILLS = int(os.environ.get("CEF_CRASH_KILLS", "14"))  # per corpus: 2 corpora, >= 20 kills in all

pytestmark = pytest.mark.slow

ENV = {k: v for k, v in os.environ.items() if not k.upper().startswith("CEF_")}


JSONL_LINES = 20000
JSONL_BATCH = 1000  # records per commit of the large file: 20 parts


def ingest_cmd(source: Path, db: Path | str) -> list[str]:
    return [
        CEF,
        "ingest",
        str(source),
        "--db",
        str(db),
        "--embedder",
        "none",
        "--no-extract",
        "--no-progress",
        "--batch-size",
        str(JSONL_BATCH),
    ]


def make_folder(root: Path, files: int = 60) -> Path:
    folder = root / "docs"
    folder.mkdir()
    for i in range(files):
        paragraphs = "\n\n".join(
            f"Paragraph {j} of note {i}: medication {j * i % 17} and dose {j}." for j in range(30)
        )
        (folder / f"note{i:02d}.md").write_text(f"# Note {i}\n\n{paragraphs}\n")
    (folder / "graph.yaml").write_text(
        json.dumps({
            "relation_types": [{"name": "TREATS"}],
            "nodes": [{"id": f"drug{i}", "label": "Drug"} for i in range(50)]
            + [{"id": f"cond{i}", "label": "Condition"} for i in range(50)],
            "edges": [{"relation_type": "TREATS", "source": f"drug{i}", "target": f"cond{i}"} for i in range(50)],
        })
    )  # fmt: skip
    return folder


def make_jsonl(root: Path, lines: int = JSONL_LINES) -> Path:
    path = root / "corpus.jsonl"
    with path.open("w") as out:
        for i in range(lines):
            out.write(
                json.dumps(
                    {
                        "id": f"d{i}",
                        "title": f"Topic {i % 300}",
                        "text": f"Passage {i} about topic {i % 300}.",
                    }
                )
                + "\n"
            )
    return path


def check_consistent(db: Path, *, only_ingested: bool = True) -> dict[str, int]:
    """integrity_check, referential consistency, each file wholly present or absent; returns counts."""
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "nodes", "edges", "chunks"} <= tables:  # killed while the schema was made
            assert (
                not tables & {"nodes", "edges", "chunks"}
                or con.execute("SELECT 1 FROM nodes").fetchone() is None
            )
            return {"files": 0, "entries": 0, "partial": 0, "nodes": 0, "edges": 0, "chunks": 0}
        nodes = {r[0] for r in con.execute("SELECT id FROM nodes")}
        edges = {r[0]: (r[1], r[2]) for r in con.execute("SELECT id, src, dst FROM edges")}
        chunks = {r[0]: r[1] for r in con.execute("SELECT id, node_id FROM chunks")}
        assert all(s in nodes and d in nodes for s, d in edges.values()), "an edge points to a missing node"
        assert all(n is None or n in nodes for n in chunks.values()), "a chunk is linked to a missing node"
        listed: dict[str, set[str]] = {"nodes": set(), "edges": set(), "chunks": set()}
        file_chunks: dict[str, set[str]] = {}  # header key -> chunks listed by the header and its parts
        headers: dict[str, dict[str, object]] = {}
        for key, value in con.execute("SELECT key, value FROM meta WHERE key LIKE 'ingest:%'"):
            manifest = json.loads(value)
            head = key.split("\x1fpart:", 1)[0]
            if head == key:
                headers[key] = manifest
            file_chunks.setdefault(head, set()).update(manifest.get("chunks", []))
            for kind, have in (("nodes", nodes), ("edges", set(edges)), ("chunks", set(chunks))):
                ids = set(manifest.get(kind, []))
                assert ids <= have, f"{key}: {len(ids - have)} {kind} of the file are missing"
                listed[kind] |= ids
        for key, manifest in headers.items():
            if key.endswith(".jsonl") and manifest.get("complete", True):  # never half a file marked complete
                assert len(file_chunks[key]) == JSONL_LINES, f"{key} is marked complete with a part missing"
        partial = sum(1 for m in headers.values() if m.get("complete") is False and m.get("parts"))
        if only_ingested:  # every record came from a file: none outside every manifest
            assert set(chunks) <= listed["chunks"], "chunks outside every file's manifest (a partial file)"
            assert set(edges) <= listed["edges"], "edges outside every file's manifest (a partial file)"
        entries = con.execute("SELECT count(*) FROM meta WHERE key LIKE 'ingest:%'").fetchone()[0]
        return {
            "files": len(headers),
            "entries": int(entries),
            "partial": partial,
            "nodes": len(nodes),
            "edges": len(edges),
            "chunks": len(chunks),
        }
    finally:
        con.close()


def manifest_entries(db: Path) -> int:
    """How many manifest entries (file headers and parts) are committed (0 if unreadable yet)."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)
        try:
            return int(con.execute("SELECT count(*) FROM meta WHERE key LIKE 'ingest:%'").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def records(db: Path) -> tuple[set[str], set[str], set[str]]:
    con = sqlite3.connect(db)
    try:
        return (
            {r[0] for r in con.execute("SELECT id FROM nodes")},
            {r[0] for r in con.execute("SELECT id FROM edges")},
            {r[0] for r in con.execute("SELECT id FROM chunks")},
        )
    finally:
        con.close()


def timed_clean_run(source: Path, db: Path) -> tuple[float, float, float]:
    """Ingest ``source`` once, watching the file: (first commit, last commit, end), in seconds from start."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        ingest_cmd(source, db), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    seen: list[tuple[float, int]] = []
    while proc.poll() is None:
        if db.exists():
            try:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)
                n = con.execute("SELECT count(*) FROM meta WHERE key LIKE 'ingest:%'").fetchone()[0]
                con.close()
                if n and (not seen or seen[-1][1] != n):
                    seen.append((time.monotonic() - t0, int(n)))
            except sqlite3.Error:
                pass
        time.sleep(0.01)
    assert proc.returncode == 0
    end = time.monotonic() - t0
    first = seen[0][0] if seen else end * 0.5
    last = seen[-1][0] if seen else end
    return first, last, end


@pytest.mark.parametrize("corpus", ["folder", "jsonl"])
def test_sigkill_during_ingest_leaves_a_consistent_store_that_converges(corpus: str, tmp_path: Path) -> None:
    source = make_folder(tmp_path) if corpus == "folder" else make_jsonl(tmp_path)
    clean = tmp_path / "clean.db"
    first, last, full = timed_clean_run(source, clean)
    expected = check_consistent(clean)
    rng = random.Random(f"{SEED}-{corpus}")
    db = tmp_path / "crashed.db"
    killed_mid_write = 0
    seen_files: set[int] = set()
    mid_file = 0  # kills that left the large file incomplete with committed parts
    for i in range(KILLS):
        if i % 2 == 0:  # half the kills hit a fresh ingest, half a resumed one
            for leftover in tmp_path.glob("crashed.db*"):
                leftover.unlink()
        before = manifest_entries(db)
        proc = subprocess.Popen(
            ingest_cmd(source, db), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if i % 2 == 0:
            time.sleep(rng.uniform(0.7 * first, min(full, last * 1.05)))  # aim at the writing
        else:  # a resumed ingest: kill it after a random number of further commits, plus a jitter
            target = before + rng.randint(1, max(1, expected["entries"] - before - 1))
            deadline = time.monotonic() + full * 3
            while proc.poll() is None and manifest_entries(db) < target and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.05))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed_mid_write += 1
        proc.wait(timeout=60)
        if db.exists():
            state = check_consistent(db)
            seen_files.add(state["files"])
            mid_file += state["partial"]
    assert killed_mid_write >= KILLS // 3, (
        f"only {killed_mid_write} of {KILLS} runs were still running when killed"
    )
    if corpus == "jsonl":
        assert mid_file >= 2, f"only {mid_file} kills landed between two parts of the file"
    final = subprocess.run(ingest_cmd(source, db), env=ENV, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr
    assert check_consistent(db) == expected
    assert records(db) == records(clean)
    print(
        f"crash[{corpus}]: {KILLS} kills ({killed_mid_write} mid-run, {mid_file} mid-file), "
        f"file counts seen {sorted(seen_files)}, converged"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def exported_ids(db: str, out: Path) -> dict[str, set[str]]:
    """Ids of every node, edge and chunk, read back through ``cef export`` (any backend)."""
    subprocess.run(
        [CEF, "export", "--db", db, "--out", str(out), "--no-progress"],
        env=ENV,
        check=True,
        capture_output=True,
        timeout=600,
    )
    ids: dict[str, set[str]] = {"node": set(), "edge": set(), "chunk": set()}
    for line in out.read_text().splitlines():
        record = json.loads(line)
        for kind in ids:
            if kind in record:
                ids[kind].add(record[kind]["id"])
    return ids


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_two_ingests_write_one_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, tag in ((a, "a"), (b, "b")):
        folder.mkdir()
        for i in range(15):
            (folder / f"{tag}{i:02d}.md").write_text(f"# {tag} {i}\n\n" + f"Line {i} of writer {tag}.\n" * 40)
    db = str(tmp_path / "shared.db") if backend == "sqlite" else str(request.getfixturevalue("pg_dsn"))
    subprocess.run(
        [CEF, "init", "--db", db, "--embedder", "none"], env=ENV, check=True, capture_output=True, timeout=300
    )
    procs = [
        subprocess.Popen(
            ingest_cmd(f, db), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for f in (a, b)
    ]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    if backend == "sqlite":
        assert check_consistent(Path(db))["files"] == 30
    separate = tmp_path / "separate.db"
    for f in (a, b):
        subprocess.run(ingest_cmd(f, separate), env=ENV, check=True, capture_output=True, timeout=600)
    together = exported_ids(db, tmp_path / "together.jsonl")
    assert together == exported_ids(str(separate), tmp_path / "separate.jsonl")
    print(f"two writers on {backend}: 2 ingests, 30 files, {len(together['chunk'])} chunks, all present")


def stored(db: str, out: Path) -> dict[str, int]:
    """Any backend, read back through ``cef export`` and the store's ingest manifests: no edge to a missing
    node, no chunk linked to a missing node, every file's manifest records present; returns counts."""
    subprocess.run(
        [CEF, "export", "--db", db, "--out", str(out), "--no-progress"],
        env=ENV, check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    nodes: set[str] = set()
    edges: dict[str, tuple[str, str]] = {}
    chunks: dict[str, str | None] = {}
    for line in out.read_text().splitlines():
        record = json.loads(line)
        if "node" in record:
            nodes.add(record["node"]["id"])
        elif "edge" in record:
            edges[record["edge"]["id"]] = (record["edge"]["source"], record["edge"]["target"])
        elif "chunk" in record:
            chunks[record["chunk"]["id"]] = record["chunk"].get("node_id")
    assert all(s in nodes and d in nodes for s, d in edges.values()), "an edge points to a missing node"
    assert all(n is None or n in nodes for n in chunks.values()), "a chunk is linked to a missing node"
    with cef.open(db, embedder=None, create=False) as kb:
        manifests = kb.store.meta_items("ingest:")
    for key, manifest in manifests:
        for kind, have in (("nodes", nodes), ("edges", set(edges)), ("chunks", set(chunks))):
            missing = set(manifest.get(kind, [])) - have
            assert not missing, f"{key}: {len(missing)} {kind} of the file are missing (a partial file)"
    return {"files": len(manifests), "nodes": len(nodes), "edges": len(edges), "chunks": len(chunks)}


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_writable_server_and_a_cli_ingest_share_one_store(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = str(tmp_path / "shared.db") if backend == "sqlite" else str(request.getfixturevalue("pg_dsn"))
    with cef.open(db, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    port = _free_port()
    env = {**ENV, "CEF_API_KEYS": "writer-key-0123:write", "CEF_CACHE_TTL_SECONDS": "0"}
    log = tmp_path / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [CEF, "serve", "http", "--db", str(db), "--embedder", "none", "--port", str(port), "--writable"],
            env=env, stdout=out, stderr=out,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    key = {"X-API-Key": "writer-key-0123"}
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        folder = tmp_path / "cli"
        folder.mkdir()
        for i in range(10):
            (folder / f"c{i}.md").write_text(f"# Quasar note {i}\n\nThe quasar ledger entry {i}.\n")
        cli = subprocess.Popen(
            ingest_cmd(folder, db), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        posted = 0
        with httpx.Client(base_url=url, headers=key, timeout=60) as api:
            while cli.poll() is None or posted < 20:
                node = {
                    "id": f"srv{posted}",
                    "label": "Note",
                    "properties": {"name": f"server note {posted}"},
                }
                r = api.post("/api/v1/nodes", json=node)
                assert r.status_code == 201, r.text
                posted += 1
            _, err = cli.communicate(timeout=600)
            assert cli.returncode == 0, err
            found = api.post("/api/v1/search", json={"query": "quasar ledger entry", "limit": 20}).json()
            assert len({h["chunk_id"] for h in found["results"]}) >= 10, (
                found
            )  # the server sees the CLI's writes
        if backend == "sqlite":
            assert check_consistent(Path(db), only_ingested=False)["files"] == 10
        counts = stored(db, tmp_path / "export.jsonl")
        assert counts["files"] == 10
        assert {f"srv{i}" for i in range(posted)} <= exported_ids(db, tmp_path / "ids.jsonl")["node"]
        print(
            f"server + CLI on {backend}: {posted} REST writes and 10 ingested files, all present, "
            "seen by the server"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
