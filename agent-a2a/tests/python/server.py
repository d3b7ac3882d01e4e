"""An A2A agent served by the official Python SDK (a2a-sdk), for the client's tests.

Usage: server.py CALLS_FILE

Serves one skill, `add`, on 127.0.0.1 (a port the OS picks, printed on stdout as
`listening on http://127.0.0.1:PORT`). Its card declares the skill's contracts in the
`urn:agent-contracts:contracts:v1` extension: `{"a": integer, "b": integer}` in, `{"sum":
integer}` out. Every message the agent receives is appended to CALLS_FILE as one JSON line,
so a test can tell which calls reached it. `{"a": 0, "b": 0}` is answered with a sum of
`"zero"`, which breaks the declared output schema.
"""

import asyncio
import json
import socket
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format, struct_pb2
from starlette.applications import Starlette

CALLS_FILE = sys.argv[1]

INPUT = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
OUTPUT = {
    "type": "object",
    "properties": {"sum": {"type": "integer"}},
    "required": ["sum"],
}


class Adder(AgentExecutor):
    async def execute(self, context, event_queue):
        data = {}
        for part in context.message.parts:
            if part.HasField("data"):
                data = json_format.MessageToDict(part.data)
        with open(CALLS_FILE, "a") as calls:
            calls.write(json.dumps(data) + "\n")
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        total = int(data.get("a", 0)) + int(data.get("b", 0))
        result = {"sum": total if data != {"a": 0, "b": 0} else "zero"}
        value = struct_pb2.Value()
        json_format.ParseDict(result, value)
        await updater.add_artifact([pb.Part(data=value)], name="output")
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError


def card(url):
    extension = pb.AgentExtension(
        uri="urn:agent-contracts:contracts:v1",
        description="The skills' JSON Schemas",
    )
    extension.params.update({"skills": {"add": {"input_schema": INPUT, "output_schema": OUTPUT}}})
    return pb.AgentCard(
        name="adder",
        description="Adds two integers",
        version="1.0.0",
        supported_interfaces=[pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=False, extensions=[extension]),
        default_input_modes=["application/json"],
        default_output_modes=["application/json"],
        skills=[pb.AgentSkill(id="add", name="add", description="Adds the integers a and b", tags=["math"])],
    )


async def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    # Listening before the address is printed: a client's first connection waits for the
    # server rather than being refused.
    sock.listen(128)
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    agent_card = card(url)
    handler = DefaultRequestHandler(
        agent_executor=Adder(), task_store=InMemoryTaskStore(), agent_card=agent_card
    )
    routes = create_agent_card_routes(agent_card) + create_jsonrpc_routes(handler, "/")
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(f"listening on {url}", flush=True)
    await server.serve(sockets=[sock])


asyncio.run(main())
