"""Plugins by path or entry point (cef.plugins): memory extensions and parsers from outside the package."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import cef
from cef.cli import app
from cef.errors import ConfigurationError, PathEscapeError
from cef.ingest.parsers import default_registry, load_parser
from cef.memory import SemanticMemory, SemanticMemoryExtension, load_extension
from cef.plugins import MEMORY_EXTENSIONS, PARSERS, _entry_points, load_object, object_ref
from tests.support.examples import DOMAINS, EXTENSION_DIR, ROOT

EXTENSION = """
from cef.schema.specs import SemanticMemoryExtension


class Garden(SemanticMemoryExtension):
    name = "garden"

    def register(self, memory):
        memory.get_extension_registry().register_node_type("plant", "instance", {"species": "string"})
"""

PARSER = """
from cef.ingest.parsers.base import ParsedDocument
from cef.model import Batch, Node


class KeyValueParser:
    name = "kv"
    extensions = (".kv",)
    content_types = ()
    priority = 50

    def parse(self, data, ctx):
        key, _, value = data.decode().partition("=")
        node = Node(id=f"kv:{key.strip()}", label="Setting", properties={"value": value.strip()})
        return ParsedDocument(batch=Batch(nodes=[node]), parser=self.name)
"""


def one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    (tmp_path / "garden.py").write_text(EXTENSION)
    (tmp_path / "kv.py").write_text(PARSER)
    return tmp_path


def test_every_example_domain_loads_by_path() -> None:
    names = {load_extension(EXTENSION_DIR / f"{d}.py", root=ROOT).name for d in DOMAINS}
    assert names == {"code", "education", "fitness", "pharma", "rpg"}
    again = load_extension(EXTENSION_DIR / "rpg.py", root=ROOT)
    assert type(again) is type(load_extension("examples/memory/extensions/rpg.py:RPGExtension", root=ROOT))


def test_a_path_is_read_relative_to_its_root_and_never_leaves_it(plugins: Path) -> None:
    assert load_extension("garden.py", root=plugins).name == "garden"
    inner = plugins / "inner"
    inner.mkdir()
    with pytest.raises(PathEscapeError) as err:
        load_extension("../garden.py", root=inner)
    assert "outside" in one_line(err)
    with pytest.raises(PathEscapeError):
        load_extension(plugins / "garden.py", root=inner)  # absolute, but outside the root
    (inner / "link.py").symlink_to(plugins / "garden.py")
    with pytest.raises(PathEscapeError):
        load_extension("link.py", root=inner)  # a symlink that resolves outside


@pytest.mark.parametrize(
    ("spec", "content", "message"),
    [
        ("missing.py", None, "does not exist"),
        ("notes.txt", "hello", "is not a Python file"),
        ("broken.py", "def (:\n", "failed to load: SyntaxError"),
        ("raises.py", "raise RuntimeError('first\\nsecond')\n", "failed to load: RuntimeError: first second"),
        ("nul\x00.py", None, "cannot be read"),
        ("empty.py", "x = 1\n", "defines 0 memory extension classes"),
        ("garden.py:Nope", EXTENSION, "'Nope' is not defined in that file"),
        ("kv.py:KeyValueParser", PARSER, "is not a memory extension class"),
        ("no_such_extension", None, "unknown memory extension 'no_such_extension'"),
        ("no_such_module:Thing", None, "cannot import memory extension"),
    ],
)
def test_a_bad_spec_is_one_line(tmp_path: Path, spec: str, content: str | None, message: str) -> None:
    if content is not None:
        (tmp_path / spec.partition(":")[0]).write_text(content)
    with pytest.raises(ConfigurationError) as err:
        load_extension(spec, root=tmp_path)
    assert message in one_line(err)


def test_a_loaded_class_is_named_by_its_file_and_found_again(plugins: Path) -> None:
    cls = type(load_extension("garden.py", root=plugins))
    ref = object_ref(cls)
    assert ref == f"{plugins.resolve() / 'garden.py'}:Garden"
    assert load_object(ref) is cls
    assert object_ref(SemanticMemoryExtension) == "cef.schema.specs:SemanticMemoryExtension"


def test_a_memory_restores_an_extension_loaded_from_a_file(tmp_path: Path, plugins: Path) -> None:
    db = tmp_path / "memory.db"
    with SemanticMemory(cef.open(db, embedder=None), extractor=None, owns_kb=True) as memory:
        memory.register_extension(load_extension("garden.py", root=plugins))
    with SemanticMemory(cef.open(db, embedder=None), extractor=None, owns_kb=True) as memory:
        assert "garden" in memory.registry.extensions and "plant" in memory.registry.node_types


def test_a_parser_plugin_by_path(plugins: Path) -> None:
    registry = default_registry()
    assert registry.for_path("a.kv") is None
    registry.register(load_parser("kv.py", root=plugins))
    assert registry.for_path("a.kv").name == "kv"  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError) as err:
        load_parser("garden.py", root=plugins)
    assert "defines 0 parser classes" in one_line(err)


@pytest.fixture
def installed(tmp_path: Path, plugins: Path) -> Iterator[None]:
    """A distribution on sys.path whose entry points publish the two plugins."""
    dist = tmp_path / "site" / "cef_garden-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cef-garden\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{MEMORY_EXTENSIONS}]\ngarden = cef_test_garden:Garden\n\n[{PARSERS}]\nkv = cef_test_kv:KeyValueParser\n"
    )
    (tmp_path / "site" / "cef_test_garden.py").write_text(EXTENSION)
    (tmp_path / "site" / "cef_test_kv.py").write_text(PARSER)
    sys.path.insert(0, str(tmp_path / "site"))
    _entry_points.cache_clear()
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path / "site"))
        for name in ("cef_test_garden", "cef_test_kv"):
            sys.modules.pop(name, None)
        _entry_points.cache_clear()


@pytest.mark.usefixtures("installed")
def test_installed_plugins_are_known_by_name() -> None:
    assert load_extension("garden").name == "garden"
    assert default_registry().for_path("settings.kv").name == "kv"  # type: ignore[union-attr]


def test_cef_ingest_reads_the_lab_reports_with_the_example_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    base = ["ingest", "examples/ingest", "--embedder", "none", "--no-extract", "--no-progress"]
    plain = runner.invoke(app, [*base, "--db", str(tmp_path / "plain.db")])
    assert plain.exit_code == 0 and "jane_doe.lab: no parser reads this kind of file" in plain.output
    assert "--parser" in plain.output  # and says how to add one
    with_parser = runner.invoke(
        app, [*base, "--db", str(tmp_path / "lab.db"), "--parser", "examples/grammar/labreport"]
    )
    assert with_parser.exit_code == 0 and "6 ingested" in with_parser.output, with_parser.output
    with cef.open(tmp_path / "lab.db", embedder=None) as kb:
        assert kb.find_node("patient:P-001") is not None
    outside = runner.invoke(app, [*base, "--db", str(tmp_path / "x.db"), "--parser", "../elsewhere.py"])
    assert outside.exit_code == 2 and "outside" in outside.output


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(st.sampled_from(["..", ".", "inner", "garden.py", "outside.py", "link.py"]), max_size=5)
)
def test_no_path_loads_from_outside_its_root(tmp_path: Path, parts: list[str]) -> None:
    """Whatever the path, a plugin loads only from inside its root: ``..``, absolute and symlinked paths fail."""
    root = tmp_path / "root"
    (root / "inner").mkdir(parents=True, exist_ok=True)
    (root / "garden.py").write_text(EXTENSION)
    (tmp_path / "outside.py").write_text(EXTENSION.replace('"garden"', '"outside"'))
    if not (root / "link.py").is_symlink():
        (root / "link.py").symlink_to(tmp_path / "outside.py")
    spec = "/".join(parts) or "."
    try:
        loaded = load_extension(spec, root=root)
    except (ConfigurationError, PathEscapeError) as exc:
        assert "\n" not in str(exc)
        return
    assert loaded.name == "garden"  # the one plugin inside the root
