#!/usr/bin/env bash
# The packaging check: `cargo package` of every published package of the workspace, with
# verification (each `.crate` unpacked and built on its own, as crates.io users will build it).
# The packages with `publish = false` are left out, so a new package is checked as soon as it
# is a member. Extra arguments go to `cargo package` (`--no-verify`, `--list`, ...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t excludes < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] == []:
        print("--exclude"); print(p["name"])')
cargo package --workspace "${excludes[@]}" "$@"
