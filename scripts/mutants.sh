#!/usr/bin/env bash
# Mutation testing of issue 33's (and issue 31's) decision points, one file at a time, each mutant run against
# the tests of the crates that pin that file (unit and integration tests; doc tests are left
# out, see `.cargo/mutants.toml`). See TESTING.md for the rates.
#
#   scripts/mutants.sh [NAME...]    # NAME: markdown contract-checks codegen-checks compat
#                                   #       core-store file-store sql-store one-pass tape raw
#                                   #       (default: all)
#
# Environment: MUTANTS_DIR (the tree to mutate, default this checkout), MUTANTS_OUT (where the
# `mutants.out` of each NAME goes, default ./mutants), MUTANTS_ALL=1 to test every mutant of
# the file rather than those of its decision points, MUTANTS_TIMEOUT (the floor of a mutant's
# test timeout in seconds, default 120: lower it where the tests take seconds, so that each
# mutant that loops costs less), and CARGO_TARGET_DIR (shared by every
# mutant's build: point it at a warm target dir to skip a cold build per run).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${MUTANTS_DIR:-$root}"
out="${MUTANTS_OUT:-$root/mutants}"

# NAME|file|test packages|extra cargo test args|decision points (a regex on the mutant's name)
table=(
  "markdown|agent-contract/src/markdown.rs|agent-contracts-contract|--tests|(block_opening|leading_width|ordered_marker|first_line_opening|delimiter_after_dash|text_after_prefix|stars_only_first_line|delimiter_row|is_blank|Md<'.>::(tape|begin_line|header|line|column|prefix)|TapeLines<'.>::(children|start|begin_line)|write_on_one_line|captured|ToMarkdown)"
  "contract-checks|agent-contract/src/checks.rs|agent-contracts-contract|--tests|support::(compare|exact|bound|equal|multiple_of|chars|unique|raw_type|raw_number|raw_len|raw_str|raw_verdict|tape_type|tape_entries|tape_items|tape_str|tape_number|tape_bool|tape_null|tape_bound|tape_equal|tape_multiple_of|Unsure::(set|decided))"
  "codegen-checks|agent-codegen/src/emit/checks.rs|agent-checks-suite|--tests|(Walk<'_>::bound|minLength|671:32|Held::Int \\| Held::Float in Walk<'_>::one_of_values|match arm \"(multipleOf|items)\")"
  "compat|agent-schema/src/compat.rs|agent-contracts-schema|--lib|(::(types|values|objects|items|prefix|numbers|others)( |\$)|(in|replace) (same_value|allowed_value|implies|within|round_integral|tightest|count|cmp_num|cmp_float_int|cmp_numbers|Num::integral)( |\$))"
  "core-store|agent-core/src/store.rs|agent-contracts-runtime,agent-contracts-store|--tests|(check_claim|check_save|saved_record|claim_record|renew_lease|is_runnable|make_room|MemoryStore>::claim_next)"
  "file-store|agent-store/src/file.rs|agent-contracts-store|--tests|FileStore"
  "sql-store|agent-store/src/lib.rs|agent-contracts-store|--tests|(into_record|checked_version|page_sql|is_identifier|int -> |Sql::upgrade)"
  "one-pass|agent-contract/src/json/read.rs|agent-contracts-contract|--lib|(in|replace) (object_entries|string_end|string_rest|short_stop|stops|word_at|number_end|space|colon|decoded|Tape::read|Pass<'a>::(new|tape|push|key|value|close|resolve))( |\$)"
  "tape|agent-contract/src/json/tape.rs|agent-contracts-contract|--lib|(TapeValue|TapeParts|HandOver|TapeWalk|Reading|shared_part|(in|replace) (number|dedupe)( |\$)|Drop for Tape|Tape::buffer)"
  "raw|agent-contract/src/json/raw.rs|agent-contracts-contract|--lib|(RawVisitor>::visit_map|Captive::(text|value))"
)

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  names=(markdown contract-checks codegen-checks compat core-store file-store sql-store one-pass tape raw)
fi
for name in "${names[@]}"; do
  found=0
  for row in "${table[@]}"; do
    IFS='|' read -r key file packages args re <<<"$row"
    [ "$key" = "$name" ] || continue
    found=1
    filter=(--re "$re")
    [ "${MUTANTS_ALL:-0}" = 1 ] && filter=()
    mkdir -p "$out/$key"
    # --no-config: the file, the test packages and the test arguments are this row's.
    (cd "$dir" && cargo mutants --no-config -j 1 --file "$file" "${filter[@]}" \
      --test-package "$packages" --cargo-test-arg="$args" \
      --minimum-test-timeout "${MUTANTS_TIMEOUT:-120}" --output "$out/$key") || true
  done
  [ "$found" = 1 ] || { echo "unknown NAME: $name" >&2; exit 2; }
done
