#!/usr/bin/env python3
"""The per-call path as the seeds' Python does it, timed: one JSON line of median nanoseconds.

    python3 scripts/python_pipeline.py KWARGS_FILE [--rounds 15]

The path mirrors `agent-demo bench plan_generator_agent KWARGS_FILE`: `json.loads` of the
kwargs text, the reserved keys split off and every other key merged into the context (a
`context` object or JSON string under the flat keys), the context checked by a `fastjsonschema`
validator compiled once beforehand (outside the timing, as the Rust contract is), then the plan
generator's prompt rendered by a jinja2 template compiled once, with a `markdown` filter in the
same nested-list format. A call that breaks the contract ends in the retry error as JSON text.

Needs fastjsonschema and jinja2, which the project itself does not use (CI never runs this):

    pip install fastjsonschema jinja2
"""

import json
import re
import statistics
import sys
import time
import urllib.parse
from pathlib import Path

try:
    import fastjsonschema
    import jinja2
except ImportError:  # pragma: no cover - a setup message, not a code path
    sys.exit("needs fastjsonschema and jinja2: pip install fastjsonschema jinja2")

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "plan_generator_agent" / "input.schema.json"
RESERVED = ("task", "run_identifier", "expected_outputs", "output_contract_schema", "context")

TEMPLATE = """{{ task }}

# Collected information for {{ target_url|inline }} - Task: {{ task_name|inline }}
{% for item in collected_information %}
## From {{ item.agent_name }}

### Description
{{ item.description|markdown }}

### Output

{{ item.output|markdown }}
{%- if not loop.last %}

---
{%- endif %}
{% endfor %}"""

# A line that would open a markdown block: heading, list item, rule, fence, quote, table row.
BLOCK = re.compile(r"^( {0,3})([#>|]|[-+*]( |$)|\d{1,9}[.)]( |$)|```|~~~|[-*_=]{3,}\s*$)")


def escape(line):
    m = BLOCK.match(line)
    return line if m is None else m.group(1) + "\\" + line[len(m.group(1)):]


def text(value, column, inline=False):
    lines = value.split("\n")
    out = [lines[0] if inline else escape(lines[0])]
    out.extend(" " * column + escape(l) if l else "" for l in lines[1:])
    return "\n".join(out)


def scalar(value):
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return str(value)


def markdown(value, indent=0, out=None):
    """`- **key**: value` lines, `- [i]:` for compound items, `*(empty)*` for empty ones."""
    top = out is None
    out = [] if top else out
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            out.append(pad + "*(empty)*")
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                out.append(f"{pad}- **{key}**:")
                markdown(item, indent + 2, out)
            elif isinstance(item, (dict, list)):
                out.append(f"{pad}- **{key}**: *(empty)*")
            elif isinstance(item, str):
                out.append(f"{pad}- **{key}**: {text(item, indent + 2, inline=True)}")
            else:
                out.append(f"{pad}- **{key}**: {scalar(item)}")
    elif isinstance(value, list):
        if not value:
            out.append(pad + "*(empty)*")
        for i, item in enumerate(value):
            if isinstance(item, (dict, list)) and item:
                out.append(f"{pad}- [{i}]:")
                markdown(item, indent + 2, out)
            elif isinstance(item, (dict, list)):
                out.append(f"{pad}- [{i}]: *(empty)*")
            elif isinstance(item, str):
                out.append(f"{pad}- {text(item, indent + 2)}")
            else:
                out.append(f"{pad}- {scalar(item)}")
    elif isinstance(value, str):
        out.append(text(value, indent))
    else:
        out.append(scalar(value))
    return "\n".join(out) if top else None


def inline(value):
    return " ".join(part.strip() for part in markdown(value).split("\n") if part.strip())


ENV = jinja2.Environment(autoescape=False, keep_trailing_newline=False)
ENV.filters["markdown"] = markdown
ENV.filters["inline"] = inline
PROMPT = ENV.from_string(TEMPLATE)
def load_schema(path):
    """The contract with its `$id` set to its file, so the `$ref`s to the other agents' output
    contracts (`../discovery_agent/output.schema.json`) resolve to files beside it."""
    schema = json.loads(path.read_text())
    schema["$id"] = path.as_uri()
    return schema


def read_file_uri(uri):
    return json.loads(Path(urllib.parse.urlparse(uri).path).read_text())


VALIDATE = fastjsonschema.compile(load_schema(SCHEMA), handlers={"file": read_file_uri})


def pipeline(kwargs_text):
    kwargs = json.loads(kwargs_text)
    task = kwargs.get("task")
    if not isinstance(task, str):
        return json.dumps({"success": False, "error": "Tool call arguments need a `task`"})
    context = {}
    explicit = kwargs.get("context")
    if isinstance(explicit, str):
        explicit = json.loads(explicit)
    if isinstance(explicit, dict):
        context.update(explicit)
    context.update((k, v) for k, v in kwargs.items() if k not in RESERVED)
    try:
        VALIDATE(context)
    except fastjsonschema.JsonSchemaValueException as e:
        return json.dumps({
            "success": False,
            "error": "Input contract validation failed",
            "validation_message": e.message,
            "path": e.path,
            "provided_fields": list(context),
        })
    return PROMPT.render(task=task, **context)


def per_call(n, f, arg):
    start = time.perf_counter_ns()
    for _ in range(n):
        f(arg)
    return (time.perf_counter_ns() - start) / n


def timed(pipeline, name, argv):
    """Times `pipeline` on the kwargs file `argv[1]` beside `json.loads` of the same text,
    interleaved round by round; prints one JSON line, the pipeline's median under `name`."""
    path = argv[1]
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 15
    kwargs_text = Path(path).read_text()
    pipeline(kwargs_text)
    # Enough calls for about 50 ms of pipeline per round, as the Rust side calibrates.
    n = 1
    while True:
        took = per_call(n, pipeline, kwargs_text) * n
        if took >= 12_500_000 or n >= 1 << 20:
            n = max(1, int(50_000_000 / (took / n)))
            break
        n *= 2
    loads, full = [], []
    for r in range(rounds):
        pair = [(json.loads, loads), (pipeline, full)]
        for f, into in pair if r % 2 == 0 else reversed(pair):
            into.append(per_call(n, f, kwargs_text))
    print(json.dumps({
        "bytes": len(kwargs_text.encode()),
        "iterations": n,
        "json_loads_ns": round(statistics.median(loads)),
        name: round(statistics.median(full)),
        "prompt_bytes": len(pipeline(kwargs_text).encode()),
    }))


def main():
    timed(pipeline, "python_ns", sys.argv)


if __name__ == "__main__":
    main()
