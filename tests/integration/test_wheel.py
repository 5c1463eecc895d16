"""The installed package holds the library only: the example domains and the example grammar stay out."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: what lives under examples/ (loaded by path or entry point) and must not be installed
EXAMPLE_ONLY = ("cef/memory/extensions/", "cef/ingest/parsers/grammar/labreport/", "examples/")


@pytest.mark.slow
def test_the_wheel_has_no_example_domains_or_grammar(tmp_path: Path) -> None:
    """Builds the wheel from the package's own files (pip, offline) and lists it."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(ROOT / "cef", src / "cef", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "examples", src / "examples")  # beside the package, as in the repository
    build = [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*build, "-w", str(tmp_path / "dist")], check=True, cwd=tmp_path, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "cef/memory/memory.py" in names and "cef/plugins.py" in names  # the library is there
    assert "cef/ingest/parsers/grammar/base.py" in names  # the grammar extension point stays
    leaked = [n for n in names if n.startswith(EXAMPLE_ONLY) or n.endswith(".g4")]
    assert not leaked, leaked
