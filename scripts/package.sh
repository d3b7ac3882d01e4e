#!/usr/bin/env bash
# The packaging check: `cargo package` of every published package of the workspace, with
# verification (each `.crate` unpacked and built on its own, as crates.io users will build it).
# The packages with `publish = false` are left out, so a new package is checked as soon as it
# is a member. Extra arguments go to `cargo package` (`--no-verify`, `--list`, ...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
metadata=$(cargo metadata --no-deps --format-version 1)
mapfile -t excludes < <(python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] == []:
        print("--exclude"); print(p["name"])' <<<"$metadata")

# Verification builds each package against the others as packaged now, through a temporary
# local registry (target/package/tmp-registry). Cargo takes a registry's version of a package
# to be immutable: it unpacks it under $CARGO_HOME/registry/src/-<hash>/ once and then trusts
# that folder, and the unpacked files carry the archive's fixed old timestamps, so what it
# built from them looks up to date. A second run would build against the first run's sources:
# so first remove this project's packages from the local registries' folders (another run
# unpacks them again), and forget what the target folder built from such folders.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
METADATA=$metadata python3 - "$cargo_home" <<'PY'
import json, os, pathlib, shutil, sys
cargo_home = pathlib.Path(sys.argv[1])
meta = json.loads(os.environ["METADATA"])
published = [p for p in meta["packages"] if p["publish"] != []]
for p in published:
    for unpacked in cargo_home.glob(f"registry/src/-*/{p['name']}-{p['version']}"):
        shutil.rmtree(unpacked)
libs = {t["name"].replace("-", "_") for p in published for t in p["targets"]}
target = pathlib.Path(meta["target_directory"])
for deps in target.glob("*/deps"):
    for info in deps.glob("*.d"):
        name, _, hash_ = info.stem.rpartition("-")
        if name in libs and "/registry/src/-" in info.read_text(errors="replace"):
            for fingerprint in deps.parent.glob(f".fingerprint/*-{hash_}"):
                shutil.rmtree(fingerprint)
PY
cargo package --workspace "${excludes[@]}" "$@"
