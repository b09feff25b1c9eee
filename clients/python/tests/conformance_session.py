"""The session client's half of a conformance vector (conformance/README.md, "The client steps"):
the steps of a session-protocol vector, on ``baton_client.session.SessionClient``. The Python
twin of the session half of server/conformance/testing/ts-client-steps.ts.

The runner is tests/test_conformance.py, which plays each vector on the kit server, does the
``await`` and ``sleep_ms`` steps itself, and calls ``run_step(step, context)`` for the others
with its ``ConformanceContext``: ``options`` (the vector's client options, durations in ms),
``addresses`` (resolved from ``READY``), ``start(call_id, fn)`` (a call on a thread, whose value
or error is the outcome ``await`` compares), ``result_of(call_id)``, ``state`` (ours) and
``on_close(fn)``. ``run_step`` returns None when the step did what the vector says, else a
one-line problem.
"""

from __future__ import annotations

import time
from typing import Any, Dict, Optional

from baton_client.session import Claim, SessionClient


def _client(context: Any) -> SessionClient:
    """The vector's one client, made on first use from its options; closed when the vector ends."""
    client = context.state.get("session_client")
    if client is None:
        options: Dict[str, Any] = context.options
        kwargs: Dict[str, Any] = {
            # As the TypeScript runner does: a vector without an identity option sends none.
            "identity": options.get("identity"),
            "resumable": bool(options.get("resumable", False)),
        }
        for option, keyword in (
            ("min_heartbeat_interval_ms", "min_heartbeat_interval"),
            ("max_park_ms", "max_park"),
            ("connect_timeout_ms", "connect_timeout"),
        ):
            if options.get(option) is not None:
                kwargs[keyword] = options[option] / 1000
        client = SessionClient(list(context.addresses), **kwargs)
        context.state["session_client"] = client
        context.on_close(client.close)
    return client


def _claim(context: Any, call_id: str) -> Optional[Claim]:
    value = context.result_of(call_id)
    return value if isinstance(value, Claim) else None


def run_step(step: Dict[str, Any], context: Any) -> Optional[str]:
    """One client step of a session vector (not ``await``: the runner's)."""
    if "call" in step:
        kind = step["call"]
        if kind == "hold":
            client = _client(context)
            name, lease = step["name"], step["lease_ms"] / 1000
            wait = None if step.get("wait_ms", 0) == 0 else step["wait_ms"] / 1000
            context.start(step["id"], lambda: client.acquire(name, lease=lease, wait=wait))
            return None
        if kind == "release":
            claim = _claim(context, step["of"])
            if claim is None:
                return f"release of {step['of']}, which holds nothing"

            def release() -> bool:
                claim.release()  # closing the connection is the release
                return True

            context.start(step["id"], release)
            return None
        return f"{kind} on a session vector"
    if "await_lost" in step:
        claim = _claim(context, step["await_lost"])
        if claim is None:
            return "holds nothing"
        if not claim.lost.wait(step["within_ms"] / 1000):
            return f"not lost within {step['within_ms']} ms"
        code = claim.reason.code if claim.reason is not None else None
        wanted = step.get("code")
        return None if wanted is None or wanted == code else f"lost with {code}"
    if "not_lost" in step:
        claim = _claim(context, step["not_lost"])
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
    return f"unknown session step {step}"
