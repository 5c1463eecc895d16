"""The order of one ingest's files (what a file defines before what uses it) and what follows them
(links between notes, resolved once every file is in)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase
    from cef.engine.state import ProgressFn
    from cef.ingest.notelinks import LinkReport

__all__ = ["Outcome", "hidden", "in_dependency_order", "link_notes_of"]


def link_notes_of(kb: KnowledgeBase, progress: ProgressFn | None) -> LinkReport:
    """Resolve the links of every note (Markdown) once all files are in: they may link each other in
    any order (:mod:`cef.ingest.notelinks`)."""
    from cef.ingest.notelinks import link_notes

    if progress is not None:
        progress("linking notes", 0, 1)
    links = link_notes(kb)
    if progress is not None:
        progress("linking notes", 1, 1)
    return links


class Outcome(Protocol):
    """What :func:`in_dependency_order` reads of a file's outcome."""

    status: str
    waits: bool


_Job = TypeVar("_Job")
_Out = TypeVar("_Out", bound=Outcome)


def in_dependency_order(
    jobs: Sequence[_Job], run: Callable[[_Job], _Out], progress: ProgressFn | None
) -> list[_Out]:
    """Run every file's ingest so that what one file defines comes before what uses it.

    Files run in listing order; one that fails because it uses a relation type,
    node type or node not there yet (each file is one transaction, so it wrote
    nothing) waits, and the waiting files run again after every pass that wrote
    something: relation types, then nodes, then edges, whatever the file names
    and however they are spread over the sources of one ingest. A file still
    failing when a pass writes nothing is reported with its last error.
    Outcomes come back in listing order.
    """
    outcomes: dict[int, _Out] = {}
    pending = list(range(len(jobs)))
    while pending:
        waiting: list[int] = []
        wrote = False
        for i in pending:
            outcome = run(jobs[i])
            outcomes[i] = outcome
            if outcome.waits:
                waiting.append(i)
                continue
            wrote = wrote or outcome.status in ("ingested", "replaced")
            if progress is not None and len(jobs) > 1:  # one file: its records are counted instead
                progress("ingesting files", sum(not o.waits for o in outcomes.values()), len(jobs))
        if not wrote:
            break
        pending = waiting
    if progress is not None and len(jobs) > 1:
        progress("ingesting files", len(jobs), len(jobs))
    return [outcomes[i] for i in sorted(outcomes)]


def hidden(path: str) -> bool:
    """Dot files and folders (``.git``, ``.obsidian``, ``.DS_Store``): never content, never reported."""
    return any(part.startswith(".") for part in Path(path).parts)
