//! The fuzz targets of `fuzz/` on stable Rust, in `cargo test`: every input libFuzzer ever
//! crashed on (`fuzz/regressions/<target>/`) and every seed (`fuzz/corpus/<target>/seed-*`,
//! copies of `tests/fixtures`) is replayed, then a deterministic mutation loop drives each
//! target for a bounded time (3 s by default; `FUZZ_SMOKE_SECS=60` for a longer run).
//!
//! The target functions and their invariants are `fuzz/src/lib.rs`, included in this test
//! binary (`main.rs`), so libFuzzer and this loop check the same things.

use crate::agent_fuzz;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `fuzz/<kind>/<target>/` whose names start with `prefix`, sorted.
fn inputs(kind: &str, target: &str, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn budget() -> Duration {
    let secs = std::env::var("FUZZ_SMOKE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    Duration::from_secs(secs)
}

/// splitmix64: small, fast and the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Text that opens markdown blocks, ends lines, or shifts columns.
const TOKENS: &[&str] = &[
    "\n", "\r", "\r\n", "\t", "\u{b}", "\u{c}", " ", "   ", "    ", "# ", "###### ", "#", "- ",
    "-", "* ", "*", "+ ", "1. ", "1) ", "0", "> ", "```", "~~~", "`", "---", "***", "___", "===",
    "<div>", "<!--", "<?", "|", "|---|", ":-", ":", "[x]: /u", "[x", "]:", "[^1]: ", "- [ ] ",
    "\\", "**", "é", "😀", "\"", "{", "}", "[", "]", ",",
];

/// A byte-level mutation of `input`, possibly spliced with `other`.
fn mutate_bytes(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 => {
                let token = rng.pick(TOKENS).as_bytes();
                out.splice(at..at, token.iter().copied());
            }
            2 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            3 if at < out.len() => {
                let end = (at + 1 + rng.below(32)).min(out.len());
                let chunk = out[at..end].to_vec();
                out.splice(at..at, chunk);
            }
            4 if !other.is_empty() => {
                let from = rng.below(other.len());
                let end = (from + 1 + rng.below(64)).min(other.len());
                out.splice(at..at, other[from..end].iter().copied());
            }
            _ => out.insert(at, rng.next() as u8),
        }
    }
    out
}

/// A structure-aware mutation: parse the seed, put tokens into strings and keys, and write it
/// back, so the result is valid JSON that reaches the renderer.
fn mutate_json(rng: &mut Rng, input: &[u8]) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(input).ok()?;
    for _ in 0..=rng.below(4) {
        mutate_value(rng, &mut value);
    }
    serde_json::to_vec(&value).ok()
}

/// Mutates one string, key or node chosen by a random walk from `node`.
fn mutate_value(rng: &mut Rng, node: &mut Value) {
    let descend = rng.below(3) != 0;
    match node {
        Value::Object(map) if descend && !map.is_empty() => {
            let i = rng.below(map.len());
            if rng.below(4) == 0 {
                // Rename the key: keys render too.
                let key = map.keys().nth(i).unwrap().clone();
                let child = map.remove(&key).unwrap();
                map.insert(spliced(rng, &key), child);
            } else {
                mutate_value(rng, map.values_mut().nth(i).unwrap());
            }
        }
        Value::Array(items) if descend && !items.is_empty() => {
            let i = rng.below(items.len());
            mutate_value(rng, &mut items[i]);
        }
        Value::String(s) => *s = spliced(rng, s),
        Value::Object(map) => {
            map.insert(spliced(rng, ""), Value::String(spliced(rng, "x")));
        }
        Value::Array(items) => items.push(Value::String(spliced(rng, ""))),
        other => {
            *other = match rng.below(3) {
                0 => Value::String(spliced(rng, "")),
                1 => Value::Array(vec![other.take()]),
                _ => serde_json::json!({ spliced(rng, "k"): other.take() }),
            };
        }
    }
}

/// `text` with one to three tokens inserted at char boundaries.
fn spliced(rng: &mut Rng, text: &str) -> String {
    let mut out = text.to_owned();
    for _ in 0..=rng.below(3) {
        let mut at = rng.below(out.len() + 1);
        while !out.is_char_boundary(at) {
            at -= 1;
        }
        let token = TOKENS[rng.below(TOKENS.len())];
        out.insert_str(at, token);
    }
    out
}

/// How many inputs a run tried, and how many of them were JSON (and so reached the renderer or
/// the contract rather than the parser's error).
struct Runs {
    total: usize,
    json: usize,
}

/// Runs `target` on mutations of `seeds` for the time budget.
fn drive(target: fn(&[u8]), seeds: &[(String, Vec<u8>)], seed: u64) -> Runs {
    assert!(!seeds.is_empty());
    let mut rng = Rng(seed);
    let seeds: Vec<Vec<u8>> = seeds.iter().map(|(_, s)| s.clone()).collect();
    let mut pool: Vec<Vec<u8>> = seeds.clone();
    let start = Instant::now();
    let budget = budget();
    let mut runs = Runs { total: 0, json: 0 };
    while start.elapsed() < budget {
        // Half the time from a seed, so the run never drifts away into junk for good.
        let base = if rng.below(2) == 0 {
            rng.pick(&seeds).clone()
        } else {
            rng.pick(&pool).clone()
        };
        let other = rng.pick(&pool).clone();
        let input = match rng.below(3) {
            0 => mutate_bytes(&mut rng, &base, &other),
            _ => mutate_json(&mut rng, &base)
                .unwrap_or_else(|| mutate_bytes(&mut rng, &base, &other)),
        };
        let outcome = std::panic::catch_unwind(|| target(&input));
        if let Err(panic) = outcome {
            panic!(
                "input {} broke an invariant; as UTF-8 (lossy): {:?}\n{}",
                runs.total,
                String::from_utf8_lossy(&input),
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .unwrap_or("(see above)")
            );
        }
        runs.total += 1;
        let json = serde_json::from_slice::<Value>(&input).is_ok();
        runs.json += usize::from(json);
        // Keep some JSON mutants, so mutations stack up; the pool stays small.
        if json && rng.below(8) == 0 && input.len() < 64 * 1024 {
            if pool.len() < 256 {
                pool.push(input);
            } else {
                let i = rng.below(pool.len());
                pool[i] = input;
            }
        }
    }
    runs
}

fn replay(target: fn(&[u8]), files: &[(String, Vec<u8>)]) {
    for (name, data) in files {
        if let Err(panic) = std::panic::catch_unwind(|| target(data)) {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .unwrap_or("(see above)");
            panic!("{name}: {message}");
        }
    }
}

#[test]
fn markdown_regressions_and_seeds() {
    let regressions = inputs("regressions", "markdown", "");
    assert!(regressions.len() >= 7, "{} regressions", regressions.len());
    replay(agent_fuzz::markdown, &regressions);
    replay(agent_fuzz::markdown, &inputs("corpus", "markdown", "seed-"));
}

#[test]
fn kwargs_prompt_regressions_and_seeds() {
    let regressions = inputs("regressions", "kwargs_prompt", "");
    assert!(!regressions.is_empty());
    replay(agent_fuzz::kwargs_prompt, &regressions);
    replay(
        agent_fuzz::kwargs_prompt,
        &inputs("corpus", "kwargs_prompt", "seed-"),
    );
}

#[test]
fn markdown_bounded_fuzz() {
    let seeds = inputs("corpus", "markdown", "seed-");
    let runs = drive(agent_fuzz::markdown, &seeds, 0x6d61_726b_646f_776e);
    println!(
        "markdown: {} inputs ({} of them JSON), no invariant broken",
        runs.total, runs.json
    );
    assert!(runs.total > 0);
}

#[test]
fn kwargs_prompt_bounded_fuzz() {
    let seeds = inputs("corpus", "kwargs_prompt", "seed-");
    let runs = drive(agent_fuzz::kwargs_prompt, &seeds, 0x6b77_6172_6773);
    println!(
        "kwargs_prompt: {} inputs ({} of them JSON), no invariant broken",
        runs.total, runs.json
    );
    assert!(runs.total > 0);
}

/// The crashes libFuzzer and the property tests found, as plain values (the files of
/// `fuzz/regressions/` are the raw fuzzer inputs).
#[test]
fn crashes_found_by_fuzzing_stay_fixed() {
    use agent_contracts::prompt::to_markdown;
    use serde_json::json;
    // A digit followed by a multi-byte character panicked (a byte slice inside `é`).
    assert_eq!(to_markdown(&json!("0é")).unwrap(), "0é");
    assert_eq!(to_markdown(&json!(["1é. x"])).unwrap(), "- 1é. x");
    // A key whose first line is `*` made `- ***`, a thematic break.
    assert_eq!(
        to_markdown(&json!({"*\n~": 1})).unwrap(),
        "- **\\*\n  ~**: 1"
    );
    // An array item that is blank, or whose first line is blank, cannot interrupt the parent's
    // header line: `- ` became a setext underline. It is shown as a JSON string.
    assert_eq!(
        to_markdown(&json!({"a": ["  "], "b": ["\u{b} "], "c": ["\nx"]})).unwrap(),
        "- **a**:\n  - \"  \"\n- **b**:\n  - \"\\u000b \"\n- **c**:\n  - \"\\nx\""
    );
    // `- |:` after a header line with a pipe was a table delimiter row.
    assert_eq!(
        to_markdown(&json!({"a|b": ["|:"]})).unwrap(),
        "- **a|b**:\n  - \\|:"
    );
    // Blanks after `- ` move the item's content column: the following lines go there.
    assert_eq!(
        to_markdown(&json!({"k": [" \"\n    #"]})).unwrap(),
        "- **k**:\n  -  \"\n         #"
    );
    // Found by the property tests: a key ending in a line break left its `**: ` at the margin,
    // outside the list.
    assert_eq!(
        to_markdown(&json!({"o": {"a\n": 1}})).unwrap(),
        "- **o**:\n  - **a\n    **: 1"
    );
    for value in [
        json!({"": {"\n\n": null, "": null}}),
        json!("0é"),
        json!({"*\n~": 1}),
        json!({"k": ["  "]}),
        json!({"k": ["\u{b} "]}),
        json!({"a|b": ["|:"]}),
        json!({"k": [" \"\n    #"]}),
    ] {
        agent_fuzz::check_framed_markdown(&value);
    }
}

/// The large-input target on shapes at and past the default limits: many small values, deep
/// wrapping, broken fragments, strings that open blocks.
#[test]
fn kwargs_large_shapes() {
    let shapes: [(u8, u8, &str); 9] = [
        (255, 0, "{}"),
        (255, 0, "0"),
        (255, 60, "1"),
        (40, 63, "\"x\""),
        (40, 70, "\"x\""),
        (255, 2, "{\"a\": [1, 2, {\"b\": null}]}"),
        (10, 0, "\"- item\\n## heading\\n```\""),
        (3, 1, "{\"broken\": "),
        (255, 0, "1e400"),
    ];
    for (count, depth, fragment) in shapes {
        let mut data = vec![count, depth];
        data.extend_from_slice(fragment.as_bytes());
        agent_fuzz::kwargs_large(&data);
    }
    // The shapes reach the limits: the first is past the value limit, the largest past 4 MiB.
    let text = agent_fuzz::large_kwargs("{}", 1 + 255 * 997, 0);
    assert!(text.len() > 500_000);
    let text = agent_fuzz::large_kwargs("{\"a\": [1, 2, {\"b\": null}]}", 1 + 255 * 997, 2);
    assert!(text.len() > agent_contracts::Limits::default().max_bytes);
}
