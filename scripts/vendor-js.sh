#!/usr/bin/env bash
# Re-fetch the JavaScript graph library the explorer page and `cef graph --format html` ship with.
#
# Downloads the npm package with `npm pack` (no install scripts run), checks its licence, and copies
# the built, minified browser file and its LICENSE into cef/server/static/vendor/. Nothing is loaded
# from the internet at run time: the files are package data and are served by `cef serve http`.
#
#   scripts/vendor-js.sh                  # the pinned version
#   CYTOSCAPE_VERSION=3.35.0 scripts/vendor-js.sh
#
# After a version change, update VERSIONS in cef/server/static/vendor/README.md (this script does).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${CYTOSCAPE_VERSION:-3.34.4}"
DEST="$ROOT/cef/server/static/vendor"

command -v npm >/dev/null 2>&1 || { echo "vendor-js: npm is not installed (apt-get install npm)" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm pack --silent "cytoscape@$VERSION" >/dev/null)
tar -xzf "$WORK/cytoscape-$VERSION.tgz" -C "$WORK"
LICENSE_NAME="$(node -p "require('$WORK/package/package.json').license")"
[ "$LICENSE_NAME" = "MIT" ] || { echo "vendor-js: cytoscape $VERSION is licensed $LICENSE_NAME, not MIT: check it" >&2; exit 1; }

mkdir -p "$DEST"
cp "$WORK/package/dist/cytoscape.min.js" "$DEST/cytoscape.min.js"
cp "$WORK/package/LICENSE" "$DEST/cytoscape.LICENSE"
cat > "$DEST/README.md" <<NOTE
# Vendored JavaScript

Shipped inside the package so that the explorer page (\`cef serve http\`, at \`/\`) and
\`cef graph --format html\` never load anything from the internet.

| file | package | version | licence |
|---|---|---|---|
| cytoscape.min.js | cytoscape (npm, \`dist/cytoscape.min.js\`) | $VERSION | MIT, see cytoscape.LICENSE |

Re-fetch with \`scripts/vendor-js.sh\` (set \`CYTOSCAPE_VERSION\` to change the version).
NOTE
echo "vendor-js: cytoscape $VERSION -> $DEST" >&2
