"""``cef ask``: retrieve context for a question, then let an LLM answer from it, citing chunk ids
(one call of :meth:`cef.KnowledgeBase.answer`)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape

from cef.cli.common import (
    DbOption,
    EmbedderOption,
    LLMApiKeyOption,
    LLMBaseUrlOption,
    LLMModelOption,
    TimeLimitOption,
    cli_errors,
    err_console,
    make_client,
    open_engine,
    require_text,
)
from cef.engine.policy import QueryPolicy


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
    time_limit_ms: TimeLimitOption = None,
) -> None:
    """Answer a question from the knowledge base with an LLM, citing the chunks it used.

    Retrieves (graph + vector + BM25), optionally after the LLM turned the
    question into a graph query with the schema, then asks the LLM to answer
    from the retrieved passages only, citing their ids. Without --llm the
    retrieved context is printed instead.

    Example:  cef ask "Which medications interact with warfarin?" --llm ollama --model llama3.2
    """
    if fmt not in ("text", "json"):
        raise typer.BadParameter("use text or json", param_hint="--format")
    require_text(question, "QUESTION", 'cef ask "Which medications interact with warfarin?"')
    with cli_errors():
        client = make_client(llm, model, base_url, api_key) if llm else None
        try:
            kb = open_engine(db, embedder)
            try:
                got = kb.answer(
                    question,
                    client,
                    understand=understand,
                    top_k=top_k,
                    depth=depth,
                    max_tokens=max_tokens,
                    policy=QueryPolicy.limited(time_limit_ms),
                )
            finally:
                kb.close()
        finally:
            if client is not None:
                client.close()
    if fmt == "json":
        typer.echo(
            json.dumps(
                {
                    "question": got.question,
                    "answer": got.answer,
                    "citations": got.citations,
                    "understood": got.understood,
                    "notes": got.notes,
                    "query": got.query.model_dump(mode="json"),
                    "chunks": [{"id": c.id, "score": c.score, "content": c.content} for c in got.sources],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    for note in got.notes:
        err_console.print(f"note: {escape(note)}", highlight=False)
    if got.answer is None:  # the notes above said why and what to configure
        typer.echo(got.context or "(no passages found)")
        return
    typer.echo(got.answer.strip() + "\n")
    if got.citations:
        typer.echo("Sources: " + ", ".join(got.citations))
    else:
        typer.echo("The answer cites no passage. Retrieved: " + ", ".join(c.id for c in got.sources))


def register(app: typer.Typer) -> None:
    app.command()(ask)


__all__ = ["register"]
