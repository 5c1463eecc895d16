"""Test case 2: software development — Python source read with the ``ast`` module.

:class:`PythonASTParser` turns Python files into ``file``, ``class``,
``function`` and ``module`` (external import) nodes with ``defines``,
``imports``, ``calls`` and ``subclass_of`` edges, plus one chunk of source
per class and function. Given several files at once (a package), imports and
calls are resolved across them.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from cef.errors import ParseError
from cef.model import Batch, Chunk, Edge, Node, RelationSemantics
from cef.schema.kinds import NodeKind
from cef.schema.pipelines import IngestContext
from cef.schema.specs import SemanticMemoryExtension

__all__ = ["CodeExtension", "PythonASTParser"]

MAX_SOURCE_CHARS = 1500
_BRANCHES = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.ExceptHandler,
    ast.With,
    ast.AsyncWith,
    ast.BoolOp,
    ast.IfExp,
    ast.comprehension,
    ast.Match,
)


class CodeExtension(SemanticMemoryExtension):
    name = "code"

    def register(self, memory: Any) -> None:
        reg = memory.get_extension_registry()
        reg.register_node_type(
            "file",
            NodeKind.INSTANCE,
            {"path": "string", "language": "string", "lines": "int"},
            required=["path"],
            domain="code",
        )
        reg.register_node_type("module", NodeKind.INSTANCE, {"external": "bool"}, domain="code")
        reg.register_node_type(
            "function", NodeKind.INSTANCE, {"signature": "string", "complexity": "int"}, domain="code"
        )
        reg.register_node_type(
            "class", NodeKind.CLASS, {"methods": "list", "inherits": "list"}, domain="code"
        )
        reg.register_node_type(
            "pattern", NodeKind.CLASS, {"description": "string", "examples": "list"}, domain="code"
        )
        reg.register_edge_type(
            "imports",
            source_types=["file"],
            target_types=["file", "module"],
            inverse="imported_by",
            domain="code",
        )
        reg.register_edge_type(
            "defines",
            source_types=["file", "class"],
            target_types=["function", "class"],
            semantics=RelationSemantics.CONTAINMENT,
            inverse="defined_in",
            domain="code",
        )
        reg.register_edge_type(
            "calls", source_types=["function"], target_types=["function"], inverse="called_by", domain="code"
        )
        reg.register_edge_type(
            "implements", target_types=["pattern"], inverse="implemented_by", domain="code"
        )
        reg.register_edge_type("tested_by", target_types=["file"], domain="code")
        reg.register_vocabulary(
            "code",
            synonyms={
                "auth": ["authentication", "authenticate", "authorization", "oauth", "login", "credentials"],
                "function": ["method", "methods", "functions", "func"],
                "file": ["files", "source file"],
            },
        )
        reg.register_ingestion_pipeline("python", PythonASTParser(), extensions=[".py"], domain="code")


# --------------------------------------------------------------------- parser
def module_name(path: str) -> str:
    """``httpx/_auth.py`` → ``httpx._auth``; ``pkg/__init__.py`` → ``pkg``."""
    p = PurePosixPath(path)
    parts = list(p.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or p.stem


def file_id(path: str) -> str:
    return f"py:file:{path}"


def func_id(module: str, qualname: str) -> str:
    return f"py:func:{module}.{qualname}"


def class_id(module: str, qualname: str) -> str:
    return f"py:class:{module}.{qualname}"


def _first_line(doc: str | None) -> str:
    if not doc:
        return ""
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def _complexity(fn: ast.AST) -> int:
    return 1 + sum(isinstance(n, _BRANCHES) for n in ast.walk(fn))


@dataclass
class _Def:
    node_id: str
    kind: str  # function | class
    qualname: str
    ast_node: ast.AST
    cls: str | None = None  # enclosing class qualname for methods


@dataclass
class _Module:
    path: str
    name: str
    is_package: bool
    tree: ast.Module
    source: str
    ctx: IngestContext
    defs: dict[str, _Def] = field(default_factory=dict)  # qualname -> def
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified target
    imported_modules: list[str] = field(default_factory=list)


class PythonASTParser:
    """Python source → files, classes, functions, imports and calls (one file or a package)."""

    def parse(self, content: str, context: IngestContext) -> Batch:
        return self.parse_many([(content, context)])[0]

    def parse_many(self, documents: Sequence[tuple[str, IngestContext]]) -> list[Batch]:
        modules = [self._read(content, ctx) for content, ctx in documents]
        by_name = {m.name: m for m in modules}
        return [self._batch(m, by_name) for m in modules]

    # ------------------------------------------------------------ pass 1
    def _read(self, content: str, ctx: IngestContext) -> _Module:
        path = ctx.path or f"{ctx.document_id}.py"
        try:
            tree = ast.parse(content, filename=path)
        except SyntaxError as exc:
            raise ParseError(f"Python syntax error: {exc.msg}", file=path, line=exc.lineno) from exc
        mod = _Module(path, module_name(path), PurePosixPath(path).name == "__init__.py", tree, content, ctx)

        def walk(body: list[ast.stmt], prefix: str, cls: str | None) -> None:
            for node in body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    q = f"{prefix}{node.name}"
                    mod.defs[q] = _Def(func_id(mod.name, q), "function", q, node, cls)
                elif isinstance(node, ast.ClassDef):
                    q = f"{prefix}{node.name}"
                    mod.defs[q] = _Def(class_id(mod.name, q), "class", q, node, cls)
                    walk(node.body, q + ".", q)

        walk(tree.body, "", None)
        package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    mod.imported_modules.append(alias.name)
                    mod.imports[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".") if package else []
                    up = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                    base = ".".join([*up, *([node.module] if node.module else [])])
                mod.imported_modules.append(base)
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    target = f"{base}.{alias.name}" if base else alias.name
                    mod.imports[alias.asname or alias.name] = target
        return mod

    # ------------------------------------------------------------ pass 2
    def _resolve(
        self, qualified: str, by_name: dict[str, _Module], ctx: IngestContext
    ) -> tuple[str, str] | None:
        """A qualified name (``httpx._auth.BasicAuth``) → (node id, kind) if it is defined."""
        module, _, rest = qualified.rpartition(".")
        while module:
            m = by_name.get(module)
            if m is not None:
                d = m.defs.get(rest)
                if d is not None:
                    return d.node_id, d.kind
                # re-exported name: follow the module's own imports once
                target = m.imports.get(rest.split(".")[0])
                if target and target != qualified and "." in target:
                    inner = by_name.get(target.rpartition(".")[0])
                    if inner is not None and target.rpartition(".")[2] in inner.defs:
                        d = inner.defs[target.rpartition(".")[2]]
                        return d.node_id, d.kind
                return None
            for kind, fid in (("function", func_id(module, rest)), ("class", class_id(module, rest))):
                if ctx.exists(fid):
                    return fid, kind
            module, _, head = module.rpartition(".")
            rest = f"{head}.{rest}"
        return None

    def _module_target(self, name: str, by_name: dict[str, _Module], ctx: IngestContext) -> tuple[str, bool]:
        """(node id, internal) of an imported module: a file of this package, else an external module node."""
        cand = name
        while cand:
            m = by_name.get(cand)
            if m is not None:
                return file_id(m.path), True
            cand = cand.rpartition(".")[0]
        for suffix in ("/__init__.py", ".py"):
            fid = file_id(name.replace(".", "/") + suffix)
            if ctx.exists(fid):
                return fid, True
        return f"py:module:{name.split('.')[0]}", False

    def _batch(self, m: _Module, by_name: dict[str, _Module]) -> Batch:
        ctx = m.ctx
        lines = m.source.count("\n") + 1
        doc = _first_line(ast.get_docstring(m.tree))
        short = m.name.rpartition(".")[2].strip("_")
        aliases = [m.name] + ([short] if len(short) >= 3 and short != m.name and not m.is_package else [])
        fid = file_id(m.path)
        nodes: list[Node] = [
            Node(
                id=fid,
                label="file",
                properties={
                    "name": m.path,
                    "aliases": aliases,
                    "path": m.path,
                    "language": "python",
                    "lines": lines,
                    "module": m.name,
                },
                content=f"Python file {m.path} (module {m.name}){': ' + doc if doc else ''}",
            )
        ]
        edges: list[Edge] = []
        chunks: list[Chunk] = []
        seen_edges: set[str] = set()

        def add_edge(rel: str, src: str, dst: str, **props: Any) -> None:
            eid = f"{src}|{rel}|{dst}"
            if eid in seen_edges or src == dst:
                return
            seen_edges.add(eid)
            edges.append(Edge(id=eid, relation_type=rel, source=src, target=dst, properties=props))

        external: dict[str, Node] = {}
        for name in dict.fromkeys(m.imported_modules):
            if not name:
                continue
            target, internal = self._module_target(name, by_name, ctx)
            if not internal and target not in external and not ctx.exists(target):
                top = name.split(".")[0]
                external[target] = Node(id=target, label="module", properties={"name": top, "external": True})
            add_edge("imports", fid, target)
        nodes.extend(external.values())

        for q, d in m.defs.items():
            node = d.ast_node
            assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            docline = _first_line(ast.get_docstring(node))
            parent = class_id(m.name, d.cls) if d.cls else fid
            if d.kind == "class":
                assert isinstance(node, ast.ClassDef)
                bases = [ast.unparse(b) for b in node.bases]
                methods = [n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
                nodes.append(
                    Node(
                        id=d.node_id,
                        label="class",
                        properties={
                            "name": q,
                            "aliases": [f"{m.name}.{q}"],
                            "methods": methods,
                            "inherits": bases,
                            "line": node.lineno,
                            "file": m.path,
                        },
                        content=f"class {q}({', '.join(bases)}) in {m.path}{': ' + docline if docline else ''}",
                    )
                )
                for b in bases:
                    base = self._name_target(b, m, by_name)
                    if base and base[1] == "class":
                        add_edge("subclass_of", d.node_id, base[0])
            else:
                assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                sig = f"{node.name}({ast.unparse(node.args)})"
                if node.returns is not None:
                    sig += f" -> {ast.unparse(node.returns)}"
                nodes.append(
                    Node(
                        id=d.node_id,
                        label="function",
                        properties={
                            "name": q,
                            "aliases": [f"{m.name}.{q}"],
                            "signature": sig,
                            "complexity": _complexity(node),
                            "line": node.lineno,
                            "file": m.path,
                        },
                        content=f"def {q} in {m.path}{': ' + docline if docline else ''}",
                    )
                )
                for call in ast.walk(node):
                    if isinstance(call, ast.Call):
                        callee = self._call_target(call.func, d, m, by_name)
                        if callee is not None:
                            add_edge("calls", d.node_id, callee)
            add_edge("defines", parent, d.node_id)
            src = ast.get_source_segment(m.source, node) or ""
            if src.strip():
                chunks.append(
                    Chunk(
                        id=f"{d.node_id}#src",
                        content=src[:MAX_SOURCE_CHARS],
                        node_id=d.node_id,
                        metadata={"path": m.path, "line": node.lineno},
                    )
                )
        return Batch(nodes=nodes, edges=edges, chunks=chunks)

    def _name_target(self, expr: str, m: _Module, by_name: dict[str, _Module]) -> tuple[str, str] | None:
        """A dotted name as written in module ``m`` → (node id, kind) if defined somewhere known."""
        head, _, rest = expr.partition(".")
        if head in m.defs and not rest:
            d = m.defs[head]
            return d.node_id, d.kind
        target = m.imports.get(head)
        if target is not None:
            return self._resolve(f"{target}.{rest}" if rest else target, by_name, m.ctx)
        return None

    def _call_target(self, func: ast.expr, d: _Def, m: _Module, by_name: dict[str, _Module]) -> str | None:
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in ("self", "cls") and d.cls:
                q = f"{d.cls}.{func.attr}"
                hit = m.defs.get(q)
                return hit.node_id if hit is not None and hit.kind == "function" else None
            # a parameter annotated with a known class: that class's method
            assert isinstance(d.ast_node, ast.FunctionDef | ast.AsyncFunctionDef)
            args = d.ast_node.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if a.arg == func.value.id and a.annotation is not None:
                    cls = self._name_target(ast.unparse(a.annotation).strip("'\""), m, by_name)
                    if cls is not None and cls[1] == "class":
                        method = cls[0].replace("py:class:", "py:func:", 1) + f".{func.attr}"
                        if any(x.node_id == method for mod in by_name.values() for x in mod.defs.values()):
                            return method
                    return None
        try:
            expr = ast.unparse(func)
        except Exception:  # pragma: no cover - unparse handles every expression node
            return None
        found = self._name_target(expr, m, by_name)
        if found is None:
            return None
        node_id, kind = found
        if kind == "class":  # a constructor call runs __init__ when the class defines it
            init = node_id.replace("py:class:", "py:func:", 1) + ".__init__"
            for mod in by_name.values():
                if any(x.node_id == init for x in mod.defs.values()):
                    return init
            return None
        return node_id
