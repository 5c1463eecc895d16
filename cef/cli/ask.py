"""``cef ask``: retrieve context for a question, then let an LLM answer from it, citing chunk ids."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Annotated

import typer

from cef.cli.common import (
    DbOption,
    EmbedderOption,
    LLMApiKeyOption,
    LLMBaseUrlOption,
    LLMModelOption,
    cli_errors,
    err_console,
    make_client,
    open_engine,
    require_text,
)

if TYPE_CHECKING:
    from cef.model import SearchResult

ANSWER_SYSTEM = (
    "Answer the question using only the context passages below. After each statement, cite the "
    "passages it comes from by their id in square brackets, e.g. [note-1]. If the context does not "
    "answer the question, say so plainly."
)


def build_context(result: SearchResult, max_chars: int = 12_000) -> str:
    """The retrieved chunks as numbered passages headed by their ids (and the path that found them)."""
    parts: list[str] = []
    used = 0
    for r in result.results:
        head = f"[{r.chunk.id}]"
        path = r.explanation.path
        if path is not None and path.length:
            head += f" (graph: {path.describe()})"
        text = f"{head}\n{r.chunk.content.strip()}"
        if used + len(text) > max_chars and parts:
            break
        parts.append(text)
        used += len(text)
    return "\n\n".join(parts)


def cited_ids(answer: str, known: list[str]) -> list[str]:
    """Chunk ids the answer cites in square brackets (only ids that were in the context), in order."""
    found: list[str] = []
    for group in re.findall(r"\[([^\[\]]{1,600})\]", answer):
        for ident in (p.strip() for p in group.split(",")):
            if ident in known and ident not in found:
                found.append(ident)
    return found


def ask(
    question: Annotated[str, typer.Argument(help="The question, in natural language.")],
    db: DbOption = None,
    embedder: EmbedderOption = None,
    llm: Annotated[
        str | None,
        typer.Option(
            help="LLM provider: openai, vllm, ollama or mock. Without one, the context is printed.",
            envvar="CEF_LLM",
            show_default=False,
        ),
    ] = None,
    model: LLMModelOption = None,
    base_url: LLMBaseUrlOption = None,
    api_key: LLMApiKeyOption = None,
    understand: Annotated[
        bool,
        typer.Option(
            "--understand/--no-understand", help="Let the LLM turn the question into a graph query first."
        ),
    ] = True,
    top_k: Annotated[int, typer.Option("--top-k", help="Chunks to retrieve.", min=1, max=100)] = 6,
    depth: Annotated[int, typer.Option(help="Graph traversal depth (0-10).", min=0, max=10)] = 2,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Longest answer, in tokens.", min=1)] = 512,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Answer a question from the knowledge base with an LLM, citing the chunks it used.

    Retrieves (graph + vector + BM25), optionally after the LLM turned the
    question into a graph query with the schema, then asks the LLM to answer
    from the retrieved passages only, citing their ids. Without --llm the
    retrieved context is printed instead.

    Example:  cef ask "Which medications interact with warfarin?" --llm ollama --model llama3.2
    """
    from cef.model import GraphQuery, TraversalHint

    if fmt not in ("text", "json"):
        raise typer.BadParameter("use text or json", param_hint="--format")
    require_text(question, "QUESTION", 'cef ask "Which medications interact with warfarin?"')
    with cli_errors():
        client = make_client(llm, model, base_url, api_key) if llm else None
        kb = open_engine(db, embedder)
        try:
            query = GraphQuery(
                query=question, top_k=top_k, min_results=min(3, top_k), traversal=TraversalHint(depth=depth)
            )
            notes: list[str] = []
            understood = False
            if client is not None and understand:
                from cef.llm.understand import QueryUnderstanding
                from cef.schema.discovery import discover_schema

                got = QueryUnderstanding(client).understand(question, discover_schema(kb), base=query)
                query, understood, notes = got.query, got.used_llm, got.notes
            result = kb.retrieve(query)
        finally:
            kb.close()
        context = build_context(result)
        answer: str | None = None
        if client is not None:
            try:
                prompt = f"Context:\n\n{context or '(no passages found)'}\n\nQuestion: {question}"
                answer = client.generate(prompt, system=ANSWER_SYSTEM, max_tokens=max_tokens)
            finally:
                client.close()
    ids = [r.chunk.id for r in result.results]
    citations = cited_ids(answer, ids) if answer is not None else []
    if fmt == "json":
        typer.echo(
            json.dumps(
                {
                    "question": question,
                    "answer": answer,
                    "citations": citations,
                    "understood": understood,
                    "notes": notes,
                    "query": query.model_dump(mode="json"),
                    "chunks": [
                        {"id": r.chunk.id, "score": r.score, "content": r.chunk.content}
                        for r in result.results
                    ],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    for note in notes:
        err_console.print(f"note: {note}")
    if answer is None:
        err_console.print("no LLM configured (--llm or CEF_LLM): showing the retrieved context")
        typer.echo(context or "(no passages found)")
        return
    typer.echo(answer.strip() + "\n")
    if citations:
        typer.echo("Sources: " + ", ".join(citations))
    else:
        typer.echo("The answer cites no passage. Retrieved: " + ", ".join(ids))


def register(app: typer.Typer) -> None:
    app.command()(ask)


__all__ = ["build_context", "cited_ids", "register"]
