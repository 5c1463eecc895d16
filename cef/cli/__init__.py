"""The ``cef`` command. Each module in ``COMMANDS`` registers its commands on the app."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from cef.cli.common import CONFIG_FILE, EXIT_CODES_HELP

app = typer.Typer(
    name="cef",
    help=(
        "cef — Context Engineering Framework: a knowledge graph with linked text chunks, "
        "searched by graph reasoning, vectors and BM25, packed into a token budget.\n\n"
        "Start with:  cef ingest examples/clinical/graph.yaml  then  "
        'cef query "Which medications interact with warfarin?"\n\n'
        "Settings: options, then CEF_* variables, then cef.toml (--config, $CEF_CONFIG or ./cef.toml); "
        "`cef config` shows the effective ones and where each came from."
    ),
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # help is plain text: a bracket (`[cef.store]`, `[default: ...]`) is printed, never read as markup
    rich_markup_mode=None,
)


@app.callback()
def _global_options(
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="The settings file to read (default: $CEF_CONFIG, else ./cef.toml when present).",
            show_default=False,
        ),
    ] = None,
) -> None:
    CONFIG_FILE[0] = config


#: modules that add commands (each defines ``register(app)``)
COMMANDS = [
    "cef.cli.core",
    "cef.cli.settings",
    "cef.cli.serve",
    "cef.cli.tools",
    "cef.cli.ask",
    "cef.cli.context",
    "cef.cli.transfer",
    "cef.cli.graph",
    "cef.cli.memory",
]


def _load() -> None:
    for name in COMMANDS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an optional front door whose extra is missing
            if exc.name and exc.name.startswith("cef"):
                raise
            continue
        module.register(app)


_load()


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except SystemExit as exc:
        _exit(exc.code)
    _exit(0)


def _exit(code: int | str | None) -> None:
    """End the process without the interpreter's teardown once the command is done.

    Freeing every module's objects one by one (the lemma dictionary, the model
    session, pydantic's schemas) costs a short command about a tenth of a second
    of CPU. ``atexit`` handlers still run and the output is flushed; when another
    (non-daemon) thread is still running, the normal exit waits for it instead.
    """
    if any(t is not threading.main_thread() and not t.daemon for t in threading.enumerate()):
        sys.exit(code)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or broken pipe: nothing more to say
            stream.flush()
    os._exit(code or 0)
