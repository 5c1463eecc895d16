"""FileSystemSource and open_source: listing, reading, fingerprints and confinement to the root."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from cef.errors import ConfigurationError, MissingExtraError, NotFoundError, PathEscapeError
from cef.ingest.sources import DataSource, FileSystemSource, S3Source, glob_to_regex, open_source


def _tree(root: Path) -> Path:
    files = {
        "a.md": "# A\n",
        "a/x.txt": "x",
        "a/b/deep.json": "{}",
        "a.b.txt": "dots",
        "b.csv": "id,label\n",
        "docs/guide.md": "guide",
        "docs/notes.txt": "notes",
        ".hidden.txt": "secret",
        ".git/config": "[core]",
        "docs/.draft.md": "draft",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return _tree(tmp_path / "root")


def test_list_is_lexicographic_and_skips_hidden(root: Path) -> None:
    with FileSystemSource(root) as src:
        paths = [r.path for r in src.list()]
    assert paths == [
        "a.b.txt",
        "a.md",
        "a/b/deep.json",
        "a/x.txt",
        "b.csv",
        "docs/guide.md",
        "docs/notes.txt",
    ]
    assert paths == sorted(paths)


def test_include_hidden_lists_dotfiles(root: Path) -> None:
    paths = [r.path for r in FileSystemSource(root, include_hidden=True).list()]
    assert ".hidden.txt" in paths and ".git/config" in paths and "docs/.draft.md" in paths


def test_hidden_files_cannot_be_opened_when_skipped(root: Path) -> None:
    src = FileSystemSource(root)
    assert not src.exists(".hidden.txt")
    with pytest.raises(NotFoundError):
        src.read_bytes("docs/.draft.md")
    assert FileSystemSource(root, include_hidden=True).read_bytes("docs/.draft.md") == b"draft"


def test_prefix_is_a_string_prefix_of_paths(root: Path) -> None:
    src = FileSystemSource(root)
    assert [r.path for r in src.list("docs/")] == ["docs/guide.md", "docs/notes.txt"]
    assert [r.path for r in src.list("a")] == ["a.b.txt", "a.md", "a/b/deep.json", "a/x.txt"]
    assert [r.path for r in src.list("a/")] == ["a/b/deep.json", "a/x.txt"]
    assert [r.path for r in src.list("docs/g")] == ["docs/guide.md"]
    assert list(src.list("nothing/")) == []
    assert list(src.list(".git/")) == [] and list(src.list(".h")) == []  # hidden stays hidden
    assert [r.path for r in FileSystemSource(root, include_hidden=True).list(".git/")] == [".git/config"]


def test_glob(root: Path) -> None:
    src = FileSystemSource(root)
    assert [r.path for r in src.glob("*.md")] == ["a.md"]
    assert [r.path for r in src.glob("**/*.md")] == ["a.md", "docs/guide.md"]
    assert [r.path for r in src.glob("a/**")] == ["a/b/deep.json", "a/x.txt"]
    assert [r.path for r in src.glob("docs/*.txt")] == ["docs/notes.txt"]
    assert [r.path for r in src.glob("?.csv")] == ["b.csv"]
    assert [r.path for r in src.glob("[ab].*")] == ["a.b.txt", "a.md", "b.csv"]
    assert [r.path for r in src.glob("[!a].*")] == ["b.csv"]


def test_glob_to_regex_segments() -> None:
    rx = glob_to_regex("src/**/test_*.py")
    assert rx.fullmatch("src/test_a.py")
    assert rx.fullmatch("src/x/y/test_a.py")
    assert not rx.fullmatch("src/x/test_a.pyc")
    assert not glob_to_regex("*.py").fullmatch("a/b.py")  # * stays within a segment


def test_info_fingerprint_and_content_type(root: Path) -> None:
    src = FileSystemSource(root)
    info = src.info("docs/guide.md")
    assert info.path == "docs/guide.md"
    assert info.size == 5
    assert info.fingerprint == "sha256:" + hashlib.sha256(b"guide").hexdigest()
    assert info.content_type == "text/markdown"
    assert info.name == "guide.md" and info.extension == ".md"
    assert info.modified is not None and info.modified.tzinfo is not None
    listed = {r.path: r for r in src.list()}
    assert listed["docs/guide.md"] == info
    (root / "docs" / "guide.md").write_text("changed")
    assert src.info("docs/guide.md").fingerprint != info.fingerprint


def test_stat_fingerprint_changes_with_mtime(root: Path) -> None:
    src = FileSystemSource(root, fingerprint="stat")
    before = src.info("a.md").fingerprint
    assert before.startswith("stat:")
    os.utime(root / "a.md", ns=(1_000_000_000, 1_000_000_000))
    assert src.info("a.md").fingerprint != before


def test_open_read_exists(root: Path) -> None:
    src = FileSystemSource(root)
    with src.open("a/x.txt") as fh:
        assert fh.read() == b"x"
    assert src.read_bytes("./docs//notes.txt") == b"notes"
    assert src.exists("a.md")
    assert not src.exists("missing.md")
    assert not src.exists("docs")  # a folder is not a file
    with pytest.raises(NotFoundError, match=r"missing\.md"):
        src.read_bytes("missing.md")
    with pytest.raises(NotFoundError, match="folder"):
        src.open("docs")
    with pytest.raises(NotFoundError):
        src.info("docs")


@pytest.mark.parametrize("bad", ["../outside.txt", "a/../../outside.txt", "docs/../a.md", ".."])
def test_dotdot_is_refused(root: Path, bad: str) -> None:
    src = FileSystemSource(root)
    for call in (src.open, src.read_bytes, src.exists, src.info):
        with pytest.raises(PathEscapeError) as err:
            call(bad)
        assert repr(bad) in str(err.value) and str(src.root) in str(err.value)


@pytest.mark.parametrize("bad", ["/etc/passwd", "C:\\Windows\\win.ini", "C:/x", "a\\..\\..\\x", "a\x00b"])
def test_absolute_and_odd_paths_are_refused(root: Path, bad: str) -> None:
    src = FileSystemSource(root)
    with pytest.raises(PathEscapeError) as err:
        src.read_bytes(bad)
    assert str(src.root) in str(err.value)


def test_prefix_and_glob_escapes_are_refused(root: Path) -> None:
    src = FileSystemSource(root)
    with pytest.raises(PathEscapeError):
        list(src.list("../"))
    with pytest.raises(PathEscapeError):
        list(src.glob("../*.txt"))
    with pytest.raises(PathEscapeError):
        list(src.glob("/etc/*"))


def test_symlink_out_of_root_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path / "root")
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    (root / "link.txt").symlink_to(outside)
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "f.txt").write_text("out")
    (root / "linkdir").symlink_to(tmp_path / "outdir", target_is_directory=True)
    src = FileSystemSource(root)
    for path in ("link.txt", "linkdir/f.txt"):
        with pytest.raises(PathEscapeError) as err:
            src.read_bytes(path)
        assert path in str(err.value) and str(src.root) in str(err.value)
        with pytest.raises(PathEscapeError):
            src.info(path)
        with pytest.raises(PathEscapeError):
            src.exists(path)
    listed = [r.path for r in src.list()]
    assert "link.txt" not in listed and not any(p.startswith("linkdir") for p in listed)
    with pytest.raises(PathEscapeError):
        list(src.list("linkdir/"))


def test_symlink_inside_root_is_allowed(root: Path) -> None:
    (root / "alias.md").symlink_to(root / "docs" / "guide.md")
    (root / "docs_link").symlink_to(root / "docs", target_is_directory=True)
    src = FileSystemSource(root)
    assert src.read_bytes("alias.md") == b"guide"
    listed = [r.path for r in src.list()]
    assert "alias.md" in listed
    assert not any(p.startswith("docs_link/") for p in listed)  # symlinked folders are not walked


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        FileSystemSource(tmp_path / "nope")


def test_single_file_root(root: Path) -> None:
    src = FileSystemSource(root / "docs" / "guide.md")
    assert [r.path for r in src.list()] == ["guide.md"]
    assert src.read_bytes("guide.md") == b"guide"
    assert not src.exists("notes.txt")
    with pytest.raises(NotFoundError):
        src.read_bytes("notes.txt")
    assert src.uri.endswith("/docs/guide.md")


def test_open_source_paths_and_uris(root: Path) -> None:
    src = open_source(str(root))
    assert isinstance(src, FileSystemSource) and isinstance(src, DataSource)
    assert src.uri == root.resolve().as_uri() + "/"
    assert isinstance(open_source(root.resolve().as_uri()), FileSystemSource)
    assert [r.path for r in open_source(root / "b.csv").list()] == ["b.csv"]
    with pytest.raises(ConfigurationError, match="unsupported"):
        open_source("http://example.org/data")
    with pytest.raises(ConfigurationError, match="no bucket"):
        open_source("s3://")


def test_open_source_s3_endpoint_from_argument_or_environment() -> None:
    pytest.importorskip("boto3")
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_REGION": "eu-west-1"}
    src = open_source("s3://bucket/some/prefix", environ=env)
    assert isinstance(src, S3Source)
    assert src.bucket == "bucket" and src.prefix == "some/prefix/" and src.uri == "s3://bucket/some/prefix/"
    assert src._client.meta.endpoint_url == "http://127.0.0.1:1"
    assert src._client.meta.region_name == "eu-west-1"
    specific = open_source("s3://bucket", environ={**env, "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:2"})
    assert specific._client.meta.endpoint_url == "http://127.0.0.1:2"  # type: ignore[attr-defined]
    explicit = open_source("s3://bucket", endpoint_url="http://127.0.0.1:3", environ=env)
    assert explicit._client.meta.endpoint_url == "http://127.0.0.1:3"  # type: ignore[attr-defined]
    src.close()


def test_s3_without_boto3_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # makes `import boto3` fail
    with pytest.raises(MissingExtraError, match=r"cef-context\[s3\]") as err:
        S3Source("bucket")
    assert err.value.extra == "s3" and "boto3" in str(err.value)
