"""ParserRegistry: selection by extension and content type, priority overrides, default_registry."""

from __future__ import annotations

import pytest

from cef.errors import ParseError
from cef.ingest.parsers import (
    BUILTIN_PRIORITY,
    ParseContext,
    ParsedDocument,
    Parser,
    ParserRegistry,
    YamlGraphParser,
    default_registry,
)
from cef.model import Batch, Node


class UpperYaml:
    """A user's parser for YAML files that makes one node per file."""

    name = "upper-yaml"
    extensions: tuple[str, ...] = (".yaml", ".yml")
    content_types: tuple[str, ...] = ()
    priority = 10

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        node = Node(id=ctx.path, label="Raw", properties={"text": data.decode().upper()})
        return ParsedDocument(batch=Batch(nodes=[node]), document_id=node.id, parser=self.name)


def test_default_registry_picks_builtins() -> None:
    reg = default_registry()
    expected = {
        "g.yaml": "graph-yaml",
        "G.YML": "graph-yaml",
        "g.json": "graph-json",
        "n.csv": "csv",
        "n.tsv": "csv",
        "docs/readme.md": "markdown",
        "notes.txt": "text",
        "corpus.jsonl": "jsonl",
        "corpus.jsonl.gz": "jsonl",
        "paper.pdf": "pdf",
    }
    for path, name in expected.items():
        parser = reg.for_path(path)
        assert parser is not None and parser.name == name, path
    assert reg.for_path("image.png") is None
    assert reg.for_path(".md") is None  # a bare extension is a hidden file, not a Markdown file
    assert all(priority == BUILTIN_PRIORITY for priority, _ in reg.parsers())


def test_content_type_is_a_fallback() -> None:
    reg = default_registry()
    parser = reg.for_path("download", "application/pdf")
    assert parser is not None and parser.name == "pdf"
    parser = reg.for_path("blob.bin", "text/markdown; charset=utf-8")
    assert parser is not None and parser.name == "markdown"


def test_user_parser_with_lower_priority_overrides_builtin() -> None:
    reg = default_registry()
    reg.register(UpperYaml())
    parser = reg.for_path("g.yaml")
    assert parser is not None and parser.name == "upper-yaml"
    doc = reg.parse(b"a: b", ParseContext(path="g.yaml"))
    assert doc.batch.nodes[0].properties == {"text": "A: B"}
    assert reg.for_path("g.json").name == "graph-json"  # type: ignore[union-attr]  # other extensions untouched


def test_register_priority_argument_overrides_the_parsers_own() -> None:
    reg = default_registry()
    reg.register(UpperYaml(), priority=500)
    assert reg.for_path("g.yaml").name == "graph-yaml"  # type: ignore[union-attr]
    reg.register(UpperYaml(), priority=1)
    assert reg.for_path("g.yaml").name == "upper-yaml"  # type: ignore[union-attr]
    assert reg.parsers()[0][0] == 1


def test_equal_priority_later_registration_wins() -> None:
    reg = ParserRegistry([YamlGraphParser()])
    reg.register(UpperYaml(), priority=BUILTIN_PRIORITY)
    assert reg.for_path("a.yml").name == "upper-yaml"  # type: ignore[union-attr]


def test_unregister() -> None:
    reg = default_registry()
    reg.register(UpperYaml())
    assert reg.unregister("upper-yaml") == 1
    assert reg.for_path("g.yaml").name == "graph-yaml"  # type: ignore[union-attr]
    assert reg.unregister("nope") == 0


def test_default_registry_is_fresh_each_time() -> None:
    a = default_registry()
    a.register(UpperYaml())
    assert default_registry().for_path("g.yaml").name == "graph-yaml"  # type: ignore[union-attr]


def test_parse_without_parser_names_the_file() -> None:
    with pytest.raises(ParseError) as err:
        default_registry().parse(b"\x89PNG", ParseContext(path="img/logo.png"))
    assert err.value.file == "img/logo.png" and "no parser" in str(err.value)


def test_register_refuses_non_parsers_and_bad_extensions() -> None:
    reg = ParserRegistry()
    with pytest.raises(TypeError, match="not a Parser"):
        reg.register(object())  # type: ignore[arg-type]

    class Bad(UpperYaml):
        extensions: tuple[str, ...] = ("YAML",)

    with pytest.raises(ValueError, match="lower-case"):
        reg.register(Bad())


def test_builtins_satisfy_the_protocol() -> None:
    for _, parser in default_registry().parsers():
        assert isinstance(parser, Parser)
        assert parser.extensions and all(e.startswith(".") for e in parser.extensions)


def test_every_example_file_parses_with_the_default_registry() -> None:
    """The sample files in examples/ingest (shown in the README) stay valid."""
    from pathlib import Path

    from cef.ingest.sources import FileSystemSource

    folder = Path(__file__).resolve().parents[3] / "examples" / "ingest"
    reg = default_registry()
    seen = set()
    with FileSystemSource(folder) as src:
        for info in src.list():
            parser = reg.for_path(info.path)
            if parser is None:
                continue
            doc = parser.parse(src.read_bytes(info.path), ParseContext(path=info.path))
            assert len(doc.batch) > 0 and doc.warnings == [], info.path
            seen.add(parser.name)
    assert {"csv", "graph-yaml", "jsonl", "markdown"} <= seen
