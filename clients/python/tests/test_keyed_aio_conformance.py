"""The conformance kit's keyed vectors once more, on the asyncio keyed client
(``baton_client.aio.KeyedClient``): the same engine as the threaded client, reached through its
own awaitables (``acquire``, ``try_acquire``, ``AsyncGrant.release``), which the kit checks too.
The kit server, control connection, option mapping and outcome shapes are test_conformance.py's.

Every call step starts its coroutine as a task and lets it run up to its first suspension before
the next step (the Go runner waits for its client's "started" hook the same way). The asyncio
client hands the request to its engine in that first step, before it awaits anything, and the
engine sends (or queues, while connecting) each connection's lines in the order it is given
them: so a vector's requests leave in step order, as its server script expects
(conformance/README.md). The runner does not rely on the event loop running new tasks in the
order they were made.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Dict, Iterator, List, Optional

import pytest

import test_conformance as kit_runner
from baton_client.aio import AsyncGrant, KeyedClient

KEYED_VECTORS = [(vector_id, vector) for protocol, vector_id, vector in kit_runner.VECTORS if protocol == "keyed"]


@pytest.fixture(scope="module")
def kit() -> Iterator[Any]:
    server = kit_runner.KitServer()
    try:
        yield server
    finally:
        server.kill()


class AioCall:
    """One call of a vector: a task, and whether it is a try-lock (whose None is a timeout)."""

    def __init__(self, task: "asyncio.Task[Any]", try_lock: bool = False) -> None:
        self.task = task
        self.try_lock = try_lock

    def outcome(self) -> Optional[Dict[str, Any]]:
        """The vector's outcome shape once the task finished; None while it runs."""
        if not self.task.done():
            return None
        if self.task.cancelled():
            return {"error": "cancelled"}
        error = self.task.exception()
        value = None if error is not None else self.task.result()
        if error is None and value is None and self.try_lock:
            # aio try_acquire answers LockTimeout (the 1 ms wait ran out) with None.
            return {"timeout": True}
        return kit_runner.outcome_from(value, error)

    def grant(self) -> Optional[AsyncGrant]:
        if not self.task.done() or self.task.cancelled() or self.task.exception() is not None:
            return None
        value = self.task.result()
        return value if isinstance(value, AsyncGrant) else None


async def _started(task: "asyncio.Task[Any]") -> Optional[str]:
    """Lets the task run until it waits on the client (or finished): its request is with the
    engine then. A task runs its first step on the loop's next turn, so this is one turn."""
    coroutine = task.get_coro()
    for _ in range(100):
        if task.done() or inspect.getcoroutinestate(coroutine) != inspect.CORO_CREATED:
            return None
        await asyncio.sleep(0)
    return "the call did not start"


async def _release(grant: AsyncGrant) -> bool:
    return await grant.release()


async def _drive(vector: Dict[str, Any], addresses: List[str]) -> List[str]:
    client = KeyedClient(addresses, **kit_runner.keyed_client_arguments(vector["client"].get("options", {})))
    calls: Dict[str, AioCall] = {}

    async def start(call_id: str, coroutine: Any, try_lock: bool = False) -> Optional[str]:
        task = asyncio.ensure_future(coroutine)
        calls[call_id] = AioCall(task, try_lock)
        return await _started(task)

    async def run(step: Dict[str, Any]) -> Optional[str]:
        if "call" in step:
            kind = step["call"]
            if kind == "acquire":
                wait = None if step["wait_ms"] == 0 else step["wait_ms"] / 1000
                return await start(step["id"], client.acquire(step["name"], lease=step["lease_ms"] / 1000, wait=wait))
            if kind == "try_acquire":
                return await start(step["id"], client.try_acquire(step["name"], lease=step["lease_ms"] / 1000), try_lock=True)
            if kind == "release":
                of = calls.get(step["of"])
                grant = of.grant() if of is not None else None
                if grant is None:
                    return f"release of {step['of']}, which holds nothing"
                return await start(step["id"], _release(grant))
            return f"{kind} on a keyed vector"
        if "await" in step:
            call = calls.get(step["await"])
            if call is None:
                return "no such call"
            await asyncio.wait([call.task], timeout=step["within_ms"] / 1000)
            return kit_runner.judge_await(step, call.outcome())
        if "sleep_ms" in step:
            await asyncio.sleep(step["sleep_ms"] / 1000)
            return None
        if step.get("close_client"):
            await client.close()
            return None
        return f"unknown keyed step {json.dumps(step)}"

    try:
        failures = await kit_runner.drive_async(vector, run)
    finally:
        await client.close()
        tasks = [call.task for call in calls.values()]
        if tasks:
            await asyncio.wait(tasks, timeout=kit_runner.JOIN_S)
        for task in tasks:  # retrieved, so a call no step awaited is not logged as unhandled
            if task.done() and not task.cancelled():
                task.exception()
    return failures


@pytest.mark.skipif(not KEYED_VECTORS, reason="no keyed vectors in conformance/vectors")
@pytest.mark.parametrize("vector_id,vector", KEYED_VECTORS, ids=[v[0] for v in KEYED_VECTORS])
def test_aio_keyed_vector(kit: Any, vector_id: str, vector: Dict[str, Any]) -> None:
    control = kit_runner.Control(kit)
    try:
        addresses = kit_runner.play(control, vector_id, vector)
        failures = asyncio.run(_drive(vector, addresses))
        verdict = control.ask("DONE")
    finally:
        control.close()
    assert {"failures": failures, "verdict": verdict} == {"failures": [], "verdict": "PASS"}
