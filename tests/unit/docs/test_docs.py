"""The docs stay true: commands documented, the CI runs the README's test command, the public API is tidy."""

from __future__ import annotations

import re
from pathlib import Path

from typer.main import get_command
from typer.testing import CliRunner

import cef
from cef.cli import app

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()


def test_every_command_has_help_with_an_example_and_is_in_the_readme() -> None:
    group = get_command(app)
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        assert cmd.help, f"cef {name} has no help text"
        assert f"`cef {name}" in README, f"cef {name} is not documented in README.md"
    core = ["init", "ingest", "query", "stats", "context"]
    for name in core:
        assert "Example:" in (group.commands[name].help or ""), f"cef {name} --help has no Example"  # type: ignore[attr-defined]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    assert len(blocks) >= 2, "the README must open with two commands"
    run_main, run_tests = blocks[0].strip(), blocks[1].strip()
    assert "cef ingest" in run_main and "cef query" in run_main
    assert run_tests in ci, "the CI must run the README's test command verbatim"
    assert run_tests.endswith("pytest")


def test_public_api_is_sorted_and_importable() -> None:
    assert cef.__all__ == sorted(cef.__all__)
    for name in cef.__all__:
        assert hasattr(cef, name), name


def test_help_runs() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in ("ingest", "query", "context", "serve", "memory"):
        assert name in result.output
