"""The conformance kit's session vectors once more, on the asyncio session client: the same
ClaimMachine as the threaded client, but its own driver (tasks, StreamReader), which the kit
checks too. The kit server and control connection are test_conformance.py's."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, Iterator, List, Optional

import pytest

import test_conformance as kit_runner
from baton_client.aio.session import Claim, SessionClient

SESSION_VECTORS = [(vector_id, vector) for protocol, vector_id, vector in kit_runner.VECTORS if protocol == "session"]


@pytest.fixture(scope="module")
def kit() -> Iterator[Any]:
    server = kit_runner.KitServer()
    try:
        yield server
    finally:
        server.kill()


def _outcome(task: "asyncio.Task[Any]") -> Optional[Dict[str, Any]]:
    """The vector's outcome shape once the task finished; None while it runs."""
    if not task.done():
        return None
    error = task.exception()
    return kit_runner.outcome_from(None if error is not None else task.result(), error)


async def _drive(vector: Dict[str, Any], addresses: List[str]) -> List[str]:
    options = vector["client"].get("options", {})
    kwargs: Dict[str, Any] = {"identity": options.get("identity"), "resumable": bool(options.get("resumable", False))}
    for option, keyword in (("min_heartbeat_interval_ms", "min_heartbeat_interval"), ("max_park_ms", "max_park"), ("connect_timeout_ms", "connect_timeout")):
        if options.get(option) is not None:
            kwargs[keyword] = options[option] / 1000
    client = SessionClient(addresses, **kwargs)
    calls: Dict[str, "asyncio.Task[Any]"] = {}

    def claim_of(call_id: str) -> Optional[Claim]:
        task = calls.get(call_id)
        if task is None or not task.done() or task.exception() is not None:
            return None
        value = task.result()
        return value if isinstance(value, Claim) else None

    async def release(claim: Claim) -> bool:
        await claim.release()
        return True

    async def run(step: Dict[str, Any]) -> Optional[str]:
        if "call" in step:
            if step["call"] == "hold":
                wait = None if step.get("wait_ms", 0) == 0 else step["wait_ms"] / 1000
                calls[step["id"]] = asyncio.ensure_future(client.acquire(step["name"], lease=step["lease_ms"] / 1000, wait=wait))
                return None
            claim = claim_of(step["of"])
            if claim is None:
                return f"release of {step['of']}, which holds nothing"
            calls[step["id"]] = asyncio.ensure_future(release(claim))
            return None
        if "await" in step:
            task = calls.get(step["await"])
            if task is None:
                return "no such call"
            await asyncio.wait([task], timeout=step["within_ms"] / 1000)
            return kit_runner.judge_await(step, _outcome(task))
        if "await_lost" in step or "not_lost" in step:
            claim = claim_of(step.get("await_lost") or step["not_lost"])
            if claim is None:
                return "holds nothing"
            limit = step["within_ms"] if "await_lost" in step else step["for_ms"]
            try:
                await asyncio.wait_for(claim.lost.wait(), limit / 1000)
            except asyncio.TimeoutError:
                return f"not lost within {limit} ms" if "await_lost" in step else None
            if "not_lost" in step:
                return f"lost: {claim.reason}"
            code = claim.reason.code if claim.reason is not None else None
            return None if step.get("code") is None or step["code"] == code else f"lost with {code}"
        if "sleep_ms" in step:
            await asyncio.sleep(step["sleep_ms"] / 1000)
            return None
        if step.get("close_client"):
            await client.close()
            return None
        return f"unknown step {json.dumps(step)}"

    try:
        failures = await kit_runner.drive_async(vector, run)
    finally:
        await client.close()
        if calls:
            await asyncio.wait(list(calls.values()), timeout=kit_runner.JOIN_S)
    return failures


@pytest.mark.skipif(not SESSION_VECTORS, reason="no session vectors in conformance/vectors")
@pytest.mark.parametrize("vector_id,vector", SESSION_VECTORS, ids=[v[0] for v in SESSION_VECTORS])
def test_aio_session_vector(kit: Any, vector_id: str, vector: Dict[str, Any]) -> None:
    control = kit_runner.Control(kit)
    try:
        addresses = kit_runner.play(control, vector_id, vector)
        failures = asyncio.run(_drive(vector, addresses))
        verdict = control.ask("DONE")
    finally:
        control.close()
    assert {"failures": failures, "verdict": verdict} == {"failures": [], "verdict": "PASS"}
