"""S3Source against a real S3-compatible server (moto_server started on a free loopback port)."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from cef.errors import NotFoundError, PathEscapeError, StoreError
from cef.ingest.sources import S3Source, open_source

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto.server", reason="needs moto[server]")

pytestmark = pytest.mark.slow

BUCKET = "corpus-bucket"
N_DOCS = 1_150  # more than one list_objects_v2 page (1,000 keys)
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region": "us-east-1"}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    log_path = tmp_path_factory.mktemp("moto") / "moto_server.log"
    # the server logs every request: send it to a file (a pipe nobody reads fills up and blocks it)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"moto_server exited: {log_path.read_text(errors='replace')}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("moto_server did not start within 60 s") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _doc_key(i: int) -> str:
    return f"corpus/docs/{i // 100:02d}/doc{i:05d}.md"


def _doc_body(i: int) -> bytes:
    return f"# Document {i}\n\nBody of document number {i}.\n".encode()


EXTRA = {
    "corpus/readme.txt": b"read me",
    "corpus/data/graph.yaml": b"nodes: []\n",
    "corpus/.hidden/secret.txt": b"hidden",
    "corpus/folder/": b"",  # a folder marker
    "corpus/a/../../outside.txt": b"tricky key",
    "corpus//double-slash.txt": b"tricky key",
    "corpus/./dot.txt": b"tricky key",
    "corpus-sibling/not-in-prefix.txt": b"sibling",
    "other/outside.txt": b"outside the prefix",
}


@pytest.fixture(scope="module")
def client(endpoint: str) -> Any:
    c = boto3.session.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
    ).client("s3", endpoint_url=endpoint)
    c.create_bucket(Bucket=BUCKET)
    items = [(_doc_key(i), _doc_body(i)) for i in range(N_DOCS)] + list(EXTRA.items())
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda kv: c.put_object(Bucket=BUCKET, Key=kv[0], Body=kv[1]), items))
    return c


@pytest.fixture
def source(endpoint: str, client: Any) -> Iterator[S3Source]:
    with S3Source(BUCKET, "corpus", endpoint_url=endpoint, **CREDENTIALS) as src:  # type: ignore[arg-type]
        yield src


def _count_list_calls(src: S3Source) -> list[int]:
    calls = [0]

    def count(**_: Any) -> None:
        calls[0] += 1

    src._client.meta.events.register("before-call.s3.ListObjectsV2", count)
    return calls


def test_list_follows_continuation_tokens(source: S3Source) -> None:
    calls = _count_list_calls(source)
    paths = [r.path for r in source.list()]
    assert calls[0] >= 2  # more than one page was fetched
    expected = sorted(
        [_doc_key(i).removeprefix("corpus/") for i in range(N_DOCS)] + ["data/graph.yaml", "readme.txt"]
    )
    assert paths == expected  # unsafe keys, hidden keys, folder markers and other prefixes left out
    assert len(paths) == N_DOCS + 2


def test_small_pages(endpoint: str, client: Any) -> None:
    src = S3Source(BUCKET, "corpus/docs/", endpoint_url=endpoint, page_size=100, **CREDENTIALS)  # type: ignore[arg-type]
    calls = _count_list_calls(src)
    assert len(list(src.list())) == N_DOCS
    assert calls[0] == N_DOCS // 100 + 1
    src.close()


def test_prefix_and_glob(source: S3Source) -> None:
    assert [r.path for r in source.list("docs/03/")] == [f"docs/03/doc{i:05d}.md" for i in range(300, 400)]
    assert [r.path for r in source.list("docs/11/doc0114")] == [f"docs/11/doc0114{i}.md" for i in range(10)]
    assert [r.path for r in source.glob("*.txt")] == ["readme.txt"]
    assert [r.path for r in source.glob("**/*.yaml")] == ["data/graph.yaml"]
    assert len(list(source.glob("docs/*/doc000??.md"))) == 100
    assert list(source.list("nothing/")) == []


def test_fingerprint_is_the_etag(source: S3Source) -> None:
    listed = {r.path: r for r in source.list("docs/00/")}
    info = source.info("docs/00/doc00007.md")
    assert info.fingerprint == "etag:" + hashlib.md5(_doc_body(7)).hexdigest()  # single-part upload
    assert listed["docs/00/doc00007.md"].fingerprint == info.fingerprint
    assert info.size == len(_doc_body(7)) and info.content_type == "text/markdown"
    assert info.modified is not None and info.modified.tzinfo is not None


def test_fingerprint_changes_with_content(endpoint: str, client: Any) -> None:
    src = S3Source(BUCKET, "scratch", endpoint_url=endpoint, **CREDENTIALS)  # type: ignore[arg-type]
    client.put_object(Bucket=BUCKET, Key="scratch/f.txt", Body=b"one")
    before = src.info("f.txt").fingerprint
    client.put_object(Bucket=BUCKET, Key="scratch/f.txt", Body=b"two")
    assert src.info("f.txt").fingerprint != before


def test_open_read_exists(source: S3Source) -> None:
    with source.open("docs/10/doc01000.md") as stream:
        assert stream.read() == _doc_body(1000)
    assert source.read_bytes("readme.txt") == b"read me"
    assert source.exists("data/graph.yaml")
    assert not source.exists("missing.txt")
    assert not source.exists(".hidden/secret.txt")  # hidden keys are skipped like hidden files
    with pytest.raises(NotFoundError, match=r"missing\.txt"):
        source.read_bytes("missing.txt")
    with pytest.raises(NotFoundError):
        source.info("missing.txt")


@pytest.mark.parametrize(
    "bad", ["../other/outside.txt", "a/../../outside.txt", "/other/outside.txt", "..", "a\\b"]
)
def test_escapes_are_refused(source: S3Source, bad: str) -> None:
    for call in (source.read_bytes, source.exists, source.info, source.open):
        with pytest.raises(PathEscapeError) as err:
            call(bad)
        assert "s3://corpus-bucket/corpus/" in str(err.value)
    with pytest.raises(PathEscapeError):
        list(source.list("../"))


def test_open_source_reads_endpoint_and_credentials_from_the_environment(
    endpoint: str, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    env = {"AWS_ENDPOINT_URL": endpoint, "AWS_DEFAULT_REGION": "us-east-1"}
    with open_source(f"s3://{BUCKET}/corpus/data", environ=env) as src:
        assert [r.path for r in src.list()] == ["graph.yaml"]
        assert src.read_bytes("graph.yaml") == b"nodes: []\n"


def test_missing_bucket_is_a_store_error(endpoint: str, client: Any) -> None:
    src = S3Source("no-such-bucket", endpoint_url=endpoint, **CREDENTIALS)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="no-such-bucket"):
        list(src.list())
