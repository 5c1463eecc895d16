"""The shape of the package: arrows one way, backend drivers inside their adapters, a pinned public API.

Imports are read from the source (an AST scan), not by importing: a circle or a
driver import hidden in a function body or under ``TYPE_CHECKING`` counts too.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cef

PACKAGE = Path(cef.__file__).resolve().parent


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the imported name, dotted (``cef.model.graph.Node`` or ``psycopg.pq``)
    top_level: bool  # run at import time (not in a function, not under TYPE_CHECKING)


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(module: str, path: Path) -> Iterator[Import]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def walk(body: list[ast.stmt], top: bool) -> Iterator[Import]:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                yield from walk(node.body, False)
                yield from walk(node.orelse, top)
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(module, alias.name, top)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                for alias in node.names:
                    yield Import(module, f"{base}.{alias.name}", top)
            inner_top = top and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    stmts = [c for c in children if isinstance(c, ast.stmt)]
                    stmts += [s for h in children if isinstance(h, ast.ExceptHandler) for s in h.body]
                    yield from walk(stmts, inner_top)

    yield from walk(ast.parse(path.read_text(encoding="utf-8")).body, True)


ALL_IMPORTS = [imp for module, path in MODULES.items() for imp in _imports(module, path)]


def _owner(target: str) -> str | None:
    """The cef module an import names (``cef.model.Node`` → ``cef.model``), or None outside cef."""
    name = target
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _graph(*, top_level_only: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in ALL_IMPORTS:
        if top_level_only and not imp.top_level:
            continue
        target = _owner(imp.target)
        if target is not None and target != imp.module:
            edges[imp.module].add(target)
    return edges


#: circles allowed to remain (none left); the list only shrinks
ALLOWED_CIRCLES: dict[frozenset[str], str] = {}


def test_no_import_circle_at_import_time() -> None:
    assert _cycles(_graph(top_level_only=True)) == []


def test_no_import_circle_even_through_deferred_and_typing_imports() -> None:
    circles = [c for c in _cycles(_graph(top_level_only=False)) if frozenset(c) not in ALLOWED_CIRCLES]
    assert circles == [], "import circles (function-level and TYPE_CHECKING imports included)"


def test_allowed_circles_still_exist() -> None:
    """An allow-listed circle that is gone must leave the list (so the list only shrinks)."""
    present = {frozenset(c) for c in _cycles(_graph(top_level_only=False))}
    assert [sorted(c) for c in ALLOWED_CIRCLES if c not in present] == []


#: third-party backend drivers and the cef packages (or modules) allowed to import them
DRIVERS: dict[str, tuple[str, ...]] = {
    "psycopg": ("cef.store.postgres",),
    "psycopg_pool": ("cef.store.postgres",),
    "pgvector": ("cef.store.postgres",),
    "neo4j": ("cef.store.cypher",),
    "falkordb": ("cef.store.cypher",),
    "redis": ("cef.store.cypher",),
    "qdrant_client": ("cef.store.qdrant",),
    "duckdb": ("cef.store.duckdb",),
    "usearch": ("cef.vectors",),
    "hnswlib": ("cef.vectors",),
    "onnxruntime": ("cef.embed",),
    "torch": ("cef.embed",),
    "sentence_transformers": ("cef.embed",),
    "spacy": ("cef.extract",),
    "tiktoken": ("cef.context.tokens",),
    "tokenizers": ("cef.context.tokens", "cef.embed"),
    "fastapi": ("cef.server",),
    "starlette": ("cef.server",),
    "uvicorn": ("cef.server",),
    "mcp": ("cef.server.mcp",),
    "boto3": ("cef.ingest.sources",),
    "langchain_core": ("cef.adapters.langchain",),
    "llama_index": ("cef.adapters.llamaindex",),
}

#: driver imports still outside their adapter, each in a file another branch of issue 16 owns
ALLOWED_DRIVER_IMPORTS: dict[tuple[str, str], str] = {
    (
        "cef.memory.memory",
        "spacy",
    ): "the memory-on-retrieve branch moves memory onto cef.extract's one text module",
}


def _inside(module: str, allowed: tuple[str, ...]) -> bool:
    return any(module == a or module.startswith(a + ".") for a in allowed)


def test_backend_drivers_are_imported_only_in_their_adapters() -> None:
    wrong = sorted(
        {
            (imp.module, root)
            for imp in ALL_IMPORTS
            if (root := imp.target.split(".")[0]) in DRIVERS
            and not _inside(imp.module, DRIVERS[root])
            and (imp.module, root) not in ALLOWED_DRIVER_IMPORTS
        }
    )
    assert wrong == [], "backend drivers imported outside their adapter package"


def test_allowed_driver_imports_still_exist() -> None:
    present = {(imp.module, imp.target.split(".")[0]) for imp in ALL_IMPORTS}
    assert [k for k in ALLOWED_DRIVER_IMPORTS if k not in present] == []


PUBLIC_API = {
    "Batch",
    "CefError",
    "Chunk",
    "Edge",
    "Explanation",
    "GraphPath",
    "GraphQuery",
    "IndexResult",
    "KnowledgeBase",
    "Node",
    "RankedChunk",
    "RankedNode",
    "ReasoningContext",
    "RelationSemantics",
    "RelationType",
    "ResolutionTarget",
    "SearchResult",
    "SearchStrategy",
    "TraversalHint",
    "open",
}


def test_public_api_is_pinned_and_documented() -> None:
    assert set(cef.__all__) == PUBLIC_API, "cef.__all__ changed: update PUBLIC_API (and the docs) on purpose"
    assert cef.__all__ == sorted(cef.__all__)
    undocumented = [name for name in cef.__all__ if not (inspect.getdoc(getattr(cef, name)) or "").strip()]
    assert undocumented == []


def test_no_benchmark_code_in_the_package() -> None:
    assert not (PACKAGE / "bench").exists(), "benchmark harnesses live in bench/, outside the package"


def _lines(module: str) -> int:
    return len(MODULES[module].read_text(encoding="utf-8").splitlines())


def test_modules_stay_small() -> None:
    big = sorted(m for m in MODULES if _lines(m) > 600)
    assert big == [], "modules over 600 lines: split them along their seams"


# ---------------------------------------------------------------------------------------------- layers
#: the layers of docs/architecture.md, bottom up: a module imports only its own layer and those below.
#: A package names its layer; a module listed on its own (the most specific name wins) sits elsewhere.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("values", ("cef.errors", "cef.model", "cef.text", "cef.timing", "cef.graph.arrays")),
    ("settings", ("cef.config", "cef.plugins")),
    (
        "ports and adapters",
        (
            "cef.store",
            "cef.vectors",
            "cef.embed",
            "cef.llm",
            "cef.extract",
            "cef.jsonhttp",
            "cef.context.tokens",
        ),
    ),
    ("in-memory indexes", ("cef.graph", "cef.patterns")),
    ("vocabulary", ("cef.schema",)),
    ("retrieval", ("cef.retrieve", "cef.llm.understand")),
    ("engine", ("cef.engine", "cef.wiring")),
    (
        "ingest and domains",
        ("cef.ingest", "cef.memory", "cef.context", "cef.transfer"),
    ),
    ("front doors", ("cef.cli", "cef.server", "cef.adapters", "cef")),
]


def layer_of(module: str) -> int:
    best, length = -1, -1
    for i, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > length:
                best, length = i, len(name)
    assert best >= 0, f"{module} is in no layer of LAYERS"
    return best


def upward_imports(imports: list[Import]) -> list[tuple[str, str]]:
    """(importer, imported) where a module imports a cef module of a higher layer (deferred and
    TYPE_CHECKING imports included)."""
    out = set()
    for imp in imports:
        target = _owner(imp.target)
        if target is not None and layer_of(target) > layer_of(imp.module):
            out.add((imp.module, target))
    return sorted(out)


def test_no_import_points_up_a_layer() -> None:
    assert upward_imports(ALL_IMPORTS) == []


def test_the_layer_check_finds_a_planted_upward_import() -> None:
    planted = [*ALL_IMPORTS, Import("cef.model.graph", "cef.server.http.create_app", False)]
    assert upward_imports(planted) == [("cef.model.graph", "cef.server.http")]


# ---------------------------------------------------------------------------------------------- functions
MAX_FUNCTION_LINES = 100

#: functions still over the limit, each in code another branch of this wave owns; the list only shrinks
ALLOWED_LONG_FUNCTIONS: dict[str, str] = {
    "cef.memory.reconcile.reconcile": "memory: the conversations branch reworks it",
    "cef.memory.assemble.assemble": "memory: the conversations branch reworks it",
    "cef.memory.understand.understand_query": "memory: the conversations branch reworks it",
    "cef.retrieve.ppr.ppr_search": "PPR: split with the retrieval stages' typed contracts (issue 26)",
    "cef.retrieve.pathcues.name_cues": "path scoring: the unseen-graphs branch reworks it",
    "cef.cli.core.ingest": "the newcomer branch reworks the ingest command",
}


def long_functions(sources: dict[str, str]) -> dict[str, int]:
    """``module.function`` → lines, for every function of ``sources`` longer than the limit."""
    out: dict[str, int] = {}
    for module, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    out[f"{module}.{node.name}"] = lines
    return out


SOURCES = {
    module: path.read_text(encoding="utf-8")
    for module, path in MODULES.items()
    if not path.name.startswith(("LabReportLexer", "LabReportParser"))  # generated by ANTLR
}


def test_no_function_is_over_100_lines() -> None:
    found = long_functions(SOURCES)
    assert {f: n for f, n in found.items() if f not in ALLOWED_LONG_FUNCTIONS} == {}
    assert [f for f in ALLOWED_LONG_FUNCTIONS if f not in found] == [], "split: leave the allow-list"


def test_the_length_check_finds_a_planted_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions({"cef.planted": f"def long():\n{body}\n"}) == {"cef.planted.long": 101}
