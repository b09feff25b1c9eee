"""The session client's half of a conformance vector (conformance/README.md, "The client steps"):
drives ``baton_client.session.SessionClient`` through a vector's client steps and says which did
not reach their outcome. The Python twin of server/conformance/testing/ts-client-steps.ts.

Interface for a runner (the keyed helper's tests/test_conformance.py and
tests/test_session_conformance.py both use it):

- ``context``: a dict made by ``new_context(options, node_addresses)`` (or any dict holding
  ``"options"``, the vector's ``client.options``, and ``"nodes"``, node name -> ``"host:port"``
  from the kit server's ``READY`` line; ``"addresses"`` may hold the resolved list instead).
  The steps keep their state in it.
- ``run_step(step, context)`` runs one client step and returns None when it did what the vector
  says, else a one-line problem.
- ``close(context)`` closes the client and waits for every call still running (always call it).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional

from baton_client._identity import DEFAULT_IDENTITY
from baton_client.errors import BatonError, LockTimeout
from baton_client.session import Claim, SessionClient


class _Call:
    """A call started by a step and not awaited yet: its thread, and how it ended."""

    def __init__(self, work: Any) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None

        def run() -> None:
            try:
                self.value = work()
            except BaseException as error:  # noqa: BLE001 - every ending is an outcome
                self.error = error
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def outcome(self) -> Optional[Dict[str, Any]]:
        """The vector's outcome shape; None while still running."""
        if not self.done.is_set():
            return None
        if self.error is not None:
            if isinstance(self.error, LockTimeout):
                return {"timeout": True}
            if isinstance(self.error, BatonError):
                return {"error": self.error.code}
            return {"error": f"not a BatonError: {self.error!r}"}
        if isinstance(self.value, Claim):
            return {"granted": str(self.value.token)}
        if isinstance(self.value, bool):
            return {"released": self.value}
        return {"error": f"unexpected result {self.value!r}"}


def new_context(options: Dict[str, Any], nodes: Dict[str, str]) -> Dict[str, Any]:
    return {"options": options, "nodes": nodes}


def _client(context: Dict[str, Any]) -> SessionClient:
    client = context.get("session_client")
    if client is None:
        options = context.get("options") or {}
        addresses = context.get("addresses")
        if addresses is None:
            nodes = context.get("nodes") or {}
            addresses = [nodes.get(node, node) for node in options.get("addresses", ["n1"])]
        kwargs: Dict[str, Any] = {
            "identity": options["identity"] if "identity" in options else DEFAULT_IDENTITY,
            "resumable": bool(options.get("resumable", False)),
        }
        if options.get("min_heartbeat_interval_ms") is not None:
            kwargs["min_heartbeat_interval"] = options["min_heartbeat_interval_ms"] / 1000
        if options.get("max_park_ms") is not None:
            kwargs["max_park"] = options["max_park_ms"] / 1000
        if options.get("connect_timeout_ms") is not None:
            kwargs["connect_timeout"] = options["connect_timeout_ms"] / 1000
        client = SessionClient(list(addresses), **kwargs)
        context["session_client"] = client
    return client


def _calls(context: Dict[str, Any]) -> Dict[str, _Call]:
    return context.setdefault("session_calls", {})


def _claim_of(context: Dict[str, Any], call_id: str) -> Optional[Claim]:
    call = _calls(context).get(call_id)
    if call is None or not call.done.is_set():
        return None
    return call.value if isinstance(call.value, Claim) else None


def run_step(step: Dict[str, Any], context: Dict[str, Any]) -> Optional[str]:
    """One client step of a session vector; None when it did what the vector says."""
    calls = _calls(context)
    if "call" in step:
        kind = step["call"]
        if kind == "hold":
            client = _client(context)
            wait = None if step.get("wait_ms", 0) == 0 else step["wait_ms"] / 1000
            name, lease = step["name"], step["lease_ms"] / 1000
            calls[step["id"]] = _Call(lambda: client.acquire(name, lease=lease, wait=wait))
            return None
        if kind == "release":
            claim = _claim_of(context, step["of"])
            if claim is None:
                return f"release of {step['of']}, which holds nothing"

            def release(claim: Claim = claim) -> bool:
                claim.release()
                return True

            calls[step["id"]] = _Call(release)
            return None
        return f"{kind} is not a session call"
    if "await" in step:
        call = calls.get(step["await"])
        if call is None:
            return "no such call"
        call.done.wait(step["within_ms"] / 1000)
        got = call.outcome()
        if got is None:
            return f"not finished within {step['within_ms']} ms"
        wanted: List[Dict[str, Any]] = step.get("outcome_any") or ([step["outcome"]] if "outcome" in step else [])
        return None if any(_same(outcome, got) for outcome in wanted) else f"got {got}"
    if "await_lost" in step:
        claim = _claim_of(context, step["await_lost"])
        if claim is None:
            return "holds nothing"
        if not claim.lost.wait(step["within_ms"] / 1000):
            return f"not lost within {step['within_ms']} ms"
        code = claim.reason.code if claim.reason is not None else None
        wanted_code = step.get("code")
        return None if wanted_code is None or wanted_code == code else f"lost with {code}"
    if "not_lost" in step:
        claim = _claim_of(context, step["not_lost"])
        if claim is None:
            return "holds nothing"
        if claim.lost.wait(step["for_ms"] / 1000):
            return f"lost: {claim.reason}"
        return None
    if "sleep_ms" in step:
        time.sleep(step["sleep_ms"] / 1000)
        return None
    if step.get("close_client"):
        _client(context).close()
        return None
    return f"unknown step {step}"


def _same(wanted: Dict[str, Any], got: Dict[str, Any]) -> bool:
    if "granted" in wanted and "granted" in got:
        return int(wanted["granted"]) == int(got["granted"])  # compare as u64
    return wanted == got


def close(context: Dict[str, Any], timeout: float = 5.0) -> None:
    """Closes the client and waits (bounded) for every call still running."""
    client = context.get("session_client")
    if client is not None:
        client.close()
    deadline = time.monotonic() + timeout
    for call in _calls(context).values():
        call.done.wait(max(0.0, deadline - time.monotonic()))
