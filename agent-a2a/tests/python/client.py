"""Drives an agent-contracts A2A server with the official Python client (a2a-sdk).

Usage: client.py SCENARIO BASE_URL [SECOND_BASE_URL]

Each scenario prints one JSON object on its last line of stdout: what the Rust test
(agent-a2a/tests/python.rs) asserts on. Any failure raises, so the process exits non-zero.
"""

import asyncio
import json
import sys

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format, struct_pb2

PLAN_GENERATOR = "plan_generator_agent"
EVENT_PLANNING = "event_planning"


def message(parts, skill=None, task_id=None):
    msg = pb.Message(message_id="m-" + str(id(parts)), role=pb.Role.ROLE_USER)
    for part in parts:
        if isinstance(part, str):
            msg.parts.append(pb.Part(text=part))
        else:
            value = struct_pb2.Value()
            json_format.ParseDict(part, value)
            msg.parts.append(pb.Part(data=value))
    if skill:
        msg.metadata.update({"skill": skill})
    if task_id:
        msg.task_id = task_id
    return pb.SendMessageRequest(message=msg)


async def client(url, streaming=False):
    config = ClientConfig(streaming=streaming, httpx_client=httpx.AsyncClient(timeout=60))
    return await create_client(url, client_config=config)


def task_json(task):
    return json_format.MessageToDict(task)


async def send(c, request):
    """Every event of a send, as dicts; the last one holds the task's final state."""
    events = []
    async for event in c.send_message(request):
        events.append(json_format.MessageToDict(event))
    return events


async def card(url):
    async with httpx.AsyncClient() as http:
        response = await http.get(url + "/.well-known/agent-card.json")
        response.raise_for_status()
        return response.json()


async def scenario_agent(url, kwargs_path):
    c = await client(url)
    resolved = c._card  # the card as the SDK parsed it
    skills = [s.id for s in resolved.skills]
    extension = json_format.MessageToDict(resolved.capabilities.extensions[0])
    kwargs = json.load(open(kwargs_path))
    valid = await send(c, message([kwargs], skill=PLAN_GENERATOR))
    broken_kwargs = dict(kwargs)
    del broken_kwargs["collected_information"]
    broken = await send(c, message([broken_kwargs], skill=PLAN_GENERATOR))
    task_id = valid[-1]["task"]["id"]
    fetched = task_json(await c.get_task(pb.GetTaskRequest(id=task_id)))
    try:
        await c.cancel_task(pb.CancelTaskRequest(id=task_id))
        cancel_error = None
    except Exception as error:  # the SDK's TaskNotCancelableError
        cancel_error = type(error).__name__
    try:
        await c.get_task(pb.GetTaskRequest(id="no-such-task"))
        missing_error = None
    except Exception as error:
        missing_error = type(error).__name__
    print(json.dumps({
        "skills": skills,
        "extension": extension,
        "valid": valid[-1]["task"],
        "broken": broken[-1]["task"],
        "fetched_state": fetched["status"]["state"],
        "cancel_error": cancel_error,
        "missing_error": missing_error,
    }))


async def scenario_workflow(url, second_url):
    c = await client(url)
    started = await send(c, message(["Plan a holiday party for 40 guests on December 12, budget $5000"], skill=EVENT_PLANNING))
    paused = started[-1]["task"]
    # The answer goes to the second server (the same one, or another on the same store).
    c2 = await client(second_url)
    empty = await send(c2, message([{"answer": ""}], task_id=paused["id"]))
    answered = await send(c2, message(["3 guests are vegetarian; one is gluten-free."], task_id=paused["id"]))
    print(json.dumps({
        "paused": paused,
        "empty": empty[-1]["task"],
        "answered": answered[-1]["task"],
    }))


async def scenario_stream(url, kwargs_path):
    c = await client(url, streaming=True)
    kwargs = json.load(open(kwargs_path))
    events = await send(c, message([kwargs], skill=PLAN_GENERATOR))
    kinds = [next(iter(e)) for e in events]
    print(json.dumps({"kinds": kinds, "events": events}))


async def main():
    scenario, url = sys.argv[1], sys.argv[2]
    if scenario == "agent":
        await scenario_agent(url, sys.argv[3])
    elif scenario == "workflow":
        await scenario_workflow(url, sys.argv[3] if len(sys.argv) > 3 else url)
    elif scenario == "stream":
        await scenario_stream(url, sys.argv[3])
    else:
        raise SystemExit(f"unknown scenario {scenario}")


asyncio.run(main())
