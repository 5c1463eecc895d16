"""Scale-out: two ``cef serve http`` processes on one PostgreSQL, concurrent writers and readers.

For a bounded time, HTTP writers create nodes and edges through both servers,
a third process writes atomic 20-node batches through the library (and batches
that must fail: their last node repeats an id), and HTTP readers read through
both servers. Afterwards: every acknowledged write is in the database exactly
once, nothing unacknowledged appears, each server found every write the other
had acknowledged, and no reader ever saw a rolled-back record or part of a
batch.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import cef
from cef import Node, RelationType
from cef.wiring import open_store
from tests.support.pg import pg_dsn, pg_server  # noqa: F401  (fixtures)

DURATION = float(os.environ.get("CEF_SCALEOUT_SECONDS", "8"))
BATCH = 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, dsn: str, log: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CEF_")}
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", "from cef.cli import main; main()", "serve", "http",
                 "--db", dsn, "--embedder", "none", "--host", "127.0.0.1", "--port", str(self.port),
                 "--writable"],
                stdout=out, stderr=subprocess.STDOUT, env=env,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"cef serve http did not start: {log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture
def servers(pg_dsn: str, tmp_path: Path) -> Iterator[tuple[str, list[Server]]]:  # noqa: F811
    with cef.open(pg_dsn, embedder=None) as kb:
        kb.initialize([Node(id="hub", label="Hub")], [RelationType(name="HAS")])
    started: list[Server] = []
    try:
        for i in range(2):
            started.append(Server(pg_dsn, tmp_path / f"server{i}.log"))
        yield pg_dsn, started
    finally:
        for s in started:
            s.stop()


BATCH_WRITER = """
import json, sys, time, cef
from cef import Batch, Node
from cef.errors import DuplicateIdError
dsn, seconds, size, most = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
kb = cef.open(dsn, embedder=None)
end = time.monotonic() + seconds
k = 0
while time.monotonic() < end:
    k += 1
    if k % 3 == 0:  # must roll back entirely: its last node repeats the hub's id
        try:
            kb.index_batch(Batch(nodes=[Node(id=f"poison-{k}-{j}", label="Batch") for j in range(size - 1)]
                                 + [Node(id="hub", label="Batch")]))
            print(json.dumps({"unexpected": k}), flush=True)
        except DuplicateIdError:
            print(json.dumps({"rolled_back": k}), flush=True)
    elif k <= most * 3 // 2:  # at most `most` committed batches: readers list them all (1000 per page)
        kb.index_batch(Batch(nodes=[Node(id=f"b{k}-{j}", label="Batch", properties={"batch": k}) for j in range(size)]))
        print(json.dumps({"committed": k}), flush=True)
    time.sleep(0.05)
kb.close()
"""


def test_two_servers_one_database(servers: tuple[str, list[Server]]) -> None:
    dsn, (a, b) = servers
    urls = [a.url, b.url]
    stop = threading.Event()
    lock = threading.Lock()
    acked: dict[str, str] = {}  # node id -> edge id, acknowledged by a server
    errors: list[str] = []
    seen_batch_counts: list[Counter[str]] = []
    seen_nodes: set[str] = set()
    misses: list[str] = []
    reads = Counter[str]()

    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(BATCH_WRITER), dsn, str(DURATION), str(BATCH), str(900 // BATCH)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    def http_writer(n: int) -> None:
        with httpx.Client(timeout=30) as client:
            i = 0
            while not stop.is_set():
                i += 1
                url = urls[(n + i) % 2]
                node_id, edge_id = f"w{n}-{i}", f"e-w{n}-{i}"
                r = client.post(
                    url + "/api/v1/nodes", json={"id": node_id, "label": "Item", "properties": {"n": i}}
                )
                if r.status_code != 201:
                    errors.append(f"POST node {node_id}: {r.status_code} {r.text[:200]}")
                    continue
                other = urls[(n + i + 1) % 2]  # the edge goes through the other server: it must see the node
                r = client.post(
                    other + "/api/v1/edges",
                    json={"id": edge_id, "relation_type": "HAS", "source": "hub", "target": node_id},
                )
                if r.status_code != 201:
                    errors.append(f"POST edge {edge_id} via the other server: {r.status_code} {r.text[:200]}")
                    continue
                with lock:
                    acked[node_id] = edge_id

    def http_reader(n: int) -> None:
        rng = random.Random(n)
        with httpx.Client(timeout=30) as client:
            while not stop.is_set():
                url = urls[rng.randrange(2)]
                with lock:
                    sample = rng.sample(sorted(acked), min(5, len(acked)))
                for node_id in sample:  # acknowledged by some server: every server must have it
                    r = client.get(f"{url}/api/v1/nodes/{node_id}")
                    reads["node"] += 1
                    if r.status_code != 200:
                        misses.append(f"{node_id} at {url}: {r.status_code}")
                r = client.get(url + "/api/v1/nodes", params={"label": "Batch", "limit": 1000})
                reads["list"] += 1
                if r.status_code != 200:
                    errors.append(f"GET batch nodes: {r.status_code} {r.text[:200]}")
                    continue
                ids = [x["id"] for x in r.json()]
                with lock:
                    seen_nodes.update(ids)
                    seen_batch_counts.append(Counter(i.rsplit("-", 1)[0] for i in ids))

    threads = [threading.Thread(target=http_writer, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=http_reader, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    out, err = writer.communicate(timeout=DURATION + 120)
    stop.set()
    for t in threads:
        t.join(60)
    assert writer.returncode == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    committed = {e["committed"] for e in events if "committed" in e}
    rolled_back = {e["rolled_back"] for e in events if "rolled_back" in e}
    assert not [e for e in events if "unexpected" in e]
    assert committed and rolled_back and len(acked) > 20, (len(committed), len(rolled_back), len(acked))
    assert not errors, errors[:5]
    assert not misses, misses[:5]

    store = open_store(dsn)
    try:
        # no lost and no duplicated writes
        items = {n.id for n in store.get_nodes(sorted(acked))}
        assert items == set(acked)
        edges = store.get_edges(sorted(acked.values()))
        assert {(e.source, e.target) for e in edges} == {("hub", n) for n in acked}
        counts = store.counts()
        expected_batch_nodes = BATCH * len(committed)
        assert counts["nodes"] == 1 + len(acked) + expected_batch_nodes
        assert counts["edges"] == len(acked)
        _, changes = store.changes_since(0)
        inserted = Counter(
            i
            for c in changes
            if c.op == "insert_range"
            for i in store.ids_in_range(c.kind, c.rid_from or 0, c.rid_to or 0)
        )
        assert all(n == 1 for n in inserted.values())
        assert [c.seq for c in changes] == list(range(1, len(changes) + 1))
        assert store.existing_ids("node", [f"poison-{k}-0" for k in rolled_back]) == set()
    finally:
        store.close()

    # readers saw only committed data, and every batch whole or not at all
    assert not [i for i in seen_nodes if i.startswith("poison-")]
    assert {int(i[1:].split("-")[0]) for i in seen_nodes} <= committed
    partial = [c for c in seen_batch_counts if any(v != BATCH for v in c.values())]
    assert not partial, partial[:3]
    assert reads["node"] > 50 and reads["list"] > 10, reads
    # both servers end with the same view
    final = [
        sorted(
            x["id"] for x in httpx.get(u + "/api/v1/nodes", params={"label": "Batch", "limit": 1000}).json()
        )
        for u in urls
    ]
    assert final[0] == final[1] and len(final[0]) == expected_batch_nodes
    print(
        f"\nscale-out over {DURATION:.0f}s: {len(acked)} node+edge pairs acknowledged over HTTP, "
        f"{len(committed)} batches committed and {len(rolled_back)} rolled back by a library process, "
        f"{reads['node']} reads by id and {reads['list']} list reads, 0 lost, 0 duplicated, 0 partial"
    )
