#!/usr/bin/env python3
"""The Rust per-call path against the seeds' Python pipeline, on the same payloads, interleaved.

    cargo build --release -p agent-examples --features demo --bin agent-demo
    pip install fastjsonschema jinja2 "pydantic>=2"   # for the Python pipelines only
    python3 scripts/compare_python.py [--processes 5] [NAME=BINARY ...]

Without NAME=BINARY it compares `after=target/release/agent-demo` (the tree's own build);
give two, such as `before=/tmp/main/agent-demo after=target/release/agent-demo`, to
put a build of another commit beside it. The payloads are the seed fixture
(tests/fixtures/plan_generator/kwargs.json) and the 200 KB synthetic kwargs, written once by the
first binary's `payload` subcommand (or by `after`'s when the first has none), so every
process reads the same bytes. Each of `--processes` passes runs, per payload, every Rust
binary's `bench` on the valid call and on the invalid one (`--without target_url`), then `python_pipeline.py` (the seeds' Python) and `pydantic_pipeline.py`
(what a Python user would pick today: pydantic v2 from the JSON text), each in a process of its own, so machine noise
hits all alike; the figures are medians over passes. Prints one markdown table.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "plan_generator" / "kwargs.json"


def run_json(args):
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    argv = sys.argv[1:]
    processes = 5
    if "--processes" in argv:
        at = argv.index("--processes")
        processes = int(argv[at + 1])
        del argv[at : at + 2]
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    bins = dict(a.split("=", 1) for a in argv) or {"after": str(target / "release" / "agent-demo")}
    synthetic = Path(tempfile.mkdtemp()) / "synthetic_50.json"
    for binary in list(bins.values())[::-1]:
        done = subprocess.run([binary, "payload", "--synthetic-items", "50"], capture_output=True, text=True)
        if done.returncode == 0:
            synthetic.write_text(done.stdout)
    payloads = {"fixture": FIXTURE, "synthetic (200 KB)": synthetic}
    runs = {(p, who): [] for p in payloads for who in [*bins, "python", "pydantic"]}
    for n in range(processes):
        for name, path in payloads.items():
            for who, binary in bins.items():
                runs[(name, who)].append(run_json([binary, "bench", "plan_generator_agent", str(path)]))
                invalid = [binary, "bench", "plan_generator_agent", str(path), "--without", "target_url"]
                runs.setdefault((name, f"{who} invalid"), []).append(run_json(invalid))
            runs[(name, "python")].append(run_json([sys.executable, str(ROOT / "scripts" / "python_pipeline.py"), str(path)]))
            runs[(name, "pydantic")].append(run_json([sys.executable, str(ROOT / "scripts" / "pydantic_pipeline.py"), str(path)]))
            print(f"pass {n + 1}/{processes}: {name} done", file=sys.stderr)

    def med(rows, key):
        return statistics.median(r[key] for r in rows)

    print("| payload | bytes | Python ns | pydantic ns | json.loads ns | " + " | ".join(f"{w} ns | {w} Value floor ns | {w} / floor | Python / {w} | pydantic / {w}" for w in bins) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|---:|---:|---:|---:|" * len(bins))
    for name in payloads:
        py = runs[(name, "python")]
        pd = runs[(name, "pydantic")]
        cells = [name, str(py[0]["bytes"]), f"{med(py, 'python_ns'):,.0f}", f"{med(pd, 'pydantic_ns'):,.0f}", f"{med(py, 'json_loads_ns'):,.0f}"]
        for who in bins:
            rs = runs[(name, who)]
            cells += [
                f"{med(rs, 'pipeline_ns'):,.0f}",
                f"{med(rs, 'floor_ns'):,.0f}",
                f"{med(rs, 'ratio'):.2f}",
                f"{med(py, 'python_ns') / med(rs, 'pipeline_ns'):.1f}",
                f"{med(pd, 'pydantic_ns') / med(rs, 'pipeline_ns'):.1f}",
            ]
        print("| " + " | ".join(cells) + " |")

    # The invalid call (the same payload without `target_url`), timed in the same passes.
    print()
    print("| payload | " + " | ".join(f"{w} invalid ns | {w} Value floor ns | {w} invalid / floor" for w in bins) + " |")
    print("|---|" + "---:|---:|---:|" * len(bins))
    for name in payloads:
        cells = [name]
        for who in bins:
            rs = runs[(name, f"{who} invalid")]
            cells += [f"{med(rs, 'pipeline_ns'):,.0f}", f"{med(rs, 'floor_ns'):,.0f}", f"{med(rs, 'ratio'):.2f}"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
