#!/usr/bin/env python3
"""The per-call path as a Python user would write it today, timed: one JSON line of median
nanoseconds.

    python3 scripts/pydantic_pipeline.py KWARGS_FILE [--rounds 15]

The path mirrors `agent-demo bench plan_generator_agent KWARGS_FILE` with pydantic v2: the
kwargs text validated by pydantic-core straight from JSON (`model_validate_json`) into one model
of the call (the task and the reserved keys beside the plan generator's input fields, passed
flat), the collected items a discriminated union on `agent_name` of the producers' output
models (discovery, selector, accessibility; the data-prep agent's output any object), the
contract's `contains` rule (a discovery and a selector item) as a model validator; then the
same jinja2 prompt and `markdown` filter as scripts/python_pipeline.py, on each output dumped
back to a dict. The models are built once, outside the timing. A call that breaks the contract
ends in the retry error as JSON text.

Needs pydantic 2, jinja2 and fastjsonschema (python_pipeline.py's filters are imported from
it), which the project itself does not use (CI never runs this):

    pip install "pydantic>=2" jinja2 fastjsonschema
"""

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

try:
    from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
except ImportError:  # pragma: no cover - a setup message, not a code path
    sys.exit("needs pydantic 2: pip install 'pydantic>=2' jinja2 fastjsonschema")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import python_pipeline  # noqa: E402  (the same prompt, filters and timing)


class Open(BaseModel):
    """JSON Schema's default: properties past the declared ones are allowed and kept."""

    model_config = ConfigDict(extra="allow")


class DiscoveryOutput(Open):
    page_title: str
    discovered_elements: list[dict[str, Any]]
    forms_detected: Optional[Annotated[int, Field(ge=0)]] = None
    metadata: Optional[dict[str, Any]] = None


class SelectorOutput(Open):
    selectors: dict[str, Any]
    strategy: str
    warnings: Optional[list[str]] = None


class AccessibilityOutput(Open):
    overall_score: Annotated[int, Field(ge=0, le=100)]
    compliance_level: Literal["none", "A", "AA", "AAA"]
    issues: list[dict[str, Any]]
    passed_checks: Optional[dict[str, bool]] = None
    audit_metadata: Optional[dict[str, Any]] = None


class DiscoveryItem(Open):
    agent_name: Literal["discovery_agent"]
    description: str
    output: DiscoveryOutput


class SelectorItem(Open):
    agent_name: Literal["selector_agent"]
    description: str
    output: SelectorOutput


class AccessibilityItem(Open):
    agent_name: Literal["accessibility_agent"]
    description: str
    output: AccessibilityOutput


class DataPrepItem(Open):
    agent_name: Literal["data_prep_agent"]
    description: str
    output: dict[str, Any]


Item = Annotated[
    Union[DiscoveryItem, SelectorItem, AccessibilityItem, DataPrepItem],
    Field(discriminator="agent_name"),
]


class PlanCall(Open):
    """The flat kwargs of a plan-generator call: the task, the reserved keys, the input."""

    task: str
    run_identifier: Optional[str] = None
    target_url: Annotated[str, Field(min_length=1)]
    task_name: Annotated[str, Field(min_length=1)]
    collected_information: Annotated[list[Item], Field(min_length=1)]

    @model_validator(mode="after")
    def has_discovery_and_selectors(self):
        names = {item.agent_name for item in self.collected_information}
        for needed in ("discovery_agent", "selector_agent"):
            if needed not in names:
                raise ValueError(f"No item is the output of {needed}")
        return self


def pipeline(kwargs_text):
    try:
        call = PlanCall.model_validate_json(kwargs_text)
    except ValidationError as e:
        errors = e.errors(include_url=False, include_input=False)
        return json.dumps({
            "success": False,
            "error": "Input contract validation failed",
            "validation_message": errors[0]["msg"],
            "path": list(errors[0]["loc"]),
            "errors": [{"path": list(x["loc"]), "message": x["msg"]} for x in errors],
        })
    items = [
        {"agent_name": i.agent_name, "description": i.description,
         "output": i.output if isinstance(i.output, dict) else i.output.model_dump(exclude_none=True)}
        for i in call.collected_information
    ]
    return python_pipeline.PROMPT.render(
        task=call.task,
        target_url=call.target_url,
        task_name=call.task_name,
        collected_information=items,
    )


def main():
    python_pipeline.timed(pipeline, "pydantic_ns", sys.argv)


if __name__ == "__main__":
    main()
