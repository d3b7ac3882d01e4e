#!/usr/bin/env bash
# Records the answers the shipped eval datasets (evals/) replay in CI: each case run through its
# agent on scripts/canned_model.py (the main job's scripted answers, served on loopback), each
# answer saved with its prompt's hash to evals/recorded.json. Run it again after an edit that
# changes a prompt on purpose (a contract's description, a dataset's kwargs).
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3< <(python3 scripts/canned_model.py)
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
read -r url <&3
cargo run --quiet -p agent-contracts-cli -- eval evals --schemas schemas \
  --model openai:canned-model --openai-base-url "$url" --openai-api-key canned \
  --record evals/recorded.json
