#!/usr/bin/env bash
# Drive `cef serve mcp` (stdio) with the MCP Inspector CLI: tools/list, then one tools/call.
#
# Installs the npm package @modelcontextprotocol/inspector into .ci/node/ (gitignored) on first
# use, builds a knowledge base from examples/clinical/graph.yaml (unless one is given), and exits
# non-zero when a call fails or answers something unexpected.
#
#   scripts/inspector-check.sh            # the clinical example
#   scripts/inspector-check.sh kb.db      # your own knowledge base
#
# Environment: CEF (the cef command), PYTHON, CEF_NODE_DIR (install folder), INSPECTOR_VERSION.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_DIR="${CEF_NODE_DIR:-$ROOT/.ci/node}"
INSPECTOR_VERSION="${INSPECTOR_VERSION:-0.15.0}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)"
CEF="${CEF:-$ROOT/.venv/bin/cef}"
[ -x "$CEF" ] || CEF="$(command -v cef || true)"

fail() { echo "inspector-check: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || fail "npm is not installed"
[ -n "$CEF" ] || fail "the cef command is not installed (pip install -e '.[mcp]')"

INSPECTOR="$NODE_DIR/node_modules/.bin/mcp-inspector"
if [ ! -x "$INSPECTOR" ]; then
    echo "inspector-check: installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $NODE_DIR" >&2
    mkdir -p "$NODE_DIR"
    npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2 || fail "npm install failed"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
DB="${1:-}"
if [ -z "$DB" ]; then
    DB="$WORK/clinical.db"
    "$PYTHON" - "$ROOT/examples/clinical/graph.yaml" "$DB" <<'PY' || fail "could not build the example knowledge base"
import sys

import yaml

import cef

with open(sys.argv[1]) as f, cef.open(sys.argv[2], embedder=None) as kb:
    kb.index_batch(cef.Batch.model_validate(yaml.safe_load(f)))
PY
fi
SERVER=("$CEF" serve mcp --db "$DB" --embedder none)

# 1. tools/list: the tools are there and their descriptions carry the graph schema
"$INSPECTOR" --cli "${SERVER[@]}" --method tools/list >"$WORK/list.json" 2>"$WORK/list.err" \
    || { cat "$WORK/list.err" >&2; fail "tools/list failed"; }
"$PYTHON" - "$WORK/list.json" <<'PY' || fail "tools/list answered something unexpected (see above)"
import json
import sys

tools = {t["name"]: t for t in json.load(open(sys.argv[1]))["tools"]}
wanted = {"retrieve_knowledge", "retrieve_context", "search_memory", "get_graph_schema"}
missing = wanted - set(tools)
assert not missing, f"missing tools: {sorted(missing)}"
assert "GRAPH SCHEMA" in tools["retrieve_knowledge"]["description"], "no schema in the description"
print(f"inspector-check: tools/list OK ({len(tools)} tools: {', '.join(sorted(tools))})")
PY

# 2. tools/call: a search that must find something
"$INSPECTOR" --cli "${SERVER[@]}" --method tools/call --tool-name search_memory \
    --tool-arg query=warfarin --tool-arg limit=3 >"$WORK/call.json" 2>"$WORK/call.err" \
    || { cat "$WORK/call.err" >&2; fail "tools/call failed"; }
"$PYTHON" - "$WORK/call.json" <<'PY' || fail "tools/call answered something unexpected (see above)"
import json
import sys

result = json.load(open(sys.argv[1]))
assert not result.get("isError"), f"tool error: {result.get('content')}"
data = result.get("structuredContent") or json.loads(result["content"][0]["text"])
assert data["success"] and data["results_count"] > 0, f"no results: {data}"
print(f"inspector-check: tools/call search_memory OK ({data['results_count']} results, "
      f"first: {data['results'][0]['chunk_id']})")
PY
