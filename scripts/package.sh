#!/usr/bin/env bash
# Packages every published package of the workspace with `cargo package` (the `.crate` files under
# `<target>/package`). The packages with `publish = false` (examples, tests) are left out, found
# by `cargo metadata`, so a new package is packaged as soon as it is a member. Arguments go to
# `cargo package` (`--list`, `--allow-dirty`, `--target-dir DIR`, ...).
#
#   scripts/package.sh [ARGS...]          package (no build)
#   scripts/package.sh --each             package, then check each package on its own
#
# The packaging check of `.ci/run` is the new-user trial (scripts/new_user.sh): it packages with
# this script and builds every published package from its `.crate`, unpacked outside the
# repository, as one user's crate uses them (the facade with every feature, the code generator
# in a build script, the CLI installed). It replaced `cargo package`'s own verification, which
# built each package in full and each with its own features, so the third-party graph was built
# again and again (4 to 8 minutes a package, past half an hour for eleven on 2 cores).
#
# `--each` is the slower, stricter check to run before a release: each unpacked package checked
# on its own (`cargo check`, its default features, its lib and bins) against the others as
# packaged (a `[patch.crates-io]` table), failing on any rustc warning. It finds what one
# user's feature set hides: a dependency feature a package uses but does not ask for, code a
# package's default features leave unused. It took 33 minutes for the first seven of eleven
# packages with the machine shared by four other builds (load average 12 on 2 cores).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
metadata=$(cargo metadata --no-deps --format-version 1)
mapfile -t excludes < <(python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] == []:
        print("--exclude"); print(p["name"])' <<<"$metadata")

each=0
args=()
for arg in "$@"; do
    # (--no-verify: what this script always does; accepted for the callers that say it)
    case "$arg" in --each) each=1 ;; --no-verify) ;; *) args+=("$arg") ;; esac
done
cargo package --workspace "${excludes[@]}" --no-verify "${args[@]}"
[ "$each" = 1 ] || exit 0

target=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])' <<<"$metadata")
for arg in "${args[@]}"; do
    case "$arg" in --target-dir | --target-dir=*)
        echo "package.sh: --each checks the packages of the workspace's target folder; no --target-dir" >&2
        exit 2
        ;;
    esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/agent-contracts-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
# "name folder" of each published package, as `cargo package` named its `.crate`.
mapfile -t published < <(python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] != []:
        print(p["name"], p["name"] + "-" + p["version"])' <<<"$metadata")
patches="$work/patches.toml"
echo "[patch.crates-io]" >"$patches"
for entry in "${published[@]}"; do
    name=${entry% *}
    dir=${entry#* }
    # -m: the files get the time of unpacking, not the archive's, so that a later run, unpacked at
    # another path anyway, never looks up to date against an older build.
    tar -xzmf "$target/package/$dir.crate" -C "$work"
    echo "$name = { path = \"$work/$dir\" }" >>"$patches"
done

# No debug info: a check barely needs it.
export CARGO_PROFILE_DEV_DEBUG=false
status=0
for entry in "${published[@]}"; do
    name=${entry% *}
    dir=${entry#* }
    # A package with binaries ships its Cargo.lock (what `cargo install --locked` uses); the
    # others get the workspace's, the versions the tests ran with.
    [ -e "$work/$dir/Cargo.lock" ] || cp Cargo.lock "$work/$dir/Cargo.lock"
    started=$SECONDS
    if ! out=$(cd "$work/$dir" && cargo check --quiet --message-format short --config "$patches" \
        --target-dir "$target/package-check" 2>&1); then
        echo "package.sh: $name does not build on its own:" >&2
        echo "$out" >&2
        status=1
        continue
    fi
    # rustc's warnings, one line each in the short format (not cargo's notes).
    if grep -E '^[^ ]+\.rs:[0-9]+:[0-9]+: warning|generated [0-9]+ warnings?' <<<"$out" >&2; then
        echo "package.sh: $name warns when built on its own (above)" >&2
        status=1
        continue
    fi
    echo "package.sh: $name checked on its own ($((SECONDS - started)) s)"
done
exit "$status"
