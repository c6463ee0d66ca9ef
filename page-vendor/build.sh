#!/usr/bin/env bash
# Rebuilds src/webhand/page/vendor/accname.js from the pinned npm packages (package-lock.json).
# Build-time only: the built file is committed, so installing or testing webhand needs no npm.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund >/dev/null
out=../src/webhand/page/vendor/accname.js
mkdir -p "$(dirname "$out")"
{
  echo "// dom-accessibility-api $(node -p "require('./node_modules/dom-accessibility-api/package.json').version") (MIT, Sebastian Silbermann), bundled by page-vendor/build.sh (labels patched: see build.mjs); do not edit."
  node build.mjs
} > "$out"
cp node_modules/dom-accessibility-api/LICENSE.md ../src/webhand/page/vendor/LICENSE-dom-accessibility-api.md
echo "wrote $out ($(wc -c < "$out") bytes)"
