"""The Python client runs Baton's wire conformance kit (conformance/README.md).

For every vector in conformance/vectors/*.json (one pytest case per vector id) the runner asks
the kit server (``node bin/baton conformance-server --port 0``) to ``PLAY`` it, drives the client
through the vector's client steps against the addresses of the ``READY`` line, sends ``DONE`` and
requires ``PASS`` as well as every step's outcome.

Keyed vectors are driven here. Session-protocol vectors are driven by the session helper's
``tests/conformance_session.py``, through this interface::

    def run_step(step: dict, context: ConformanceContext) -> Optional[str]

It is called for every client step of a session vector except ``await`` and ``sleep_ms``, which
this runner does for both protocols: ``call`` (``hold``, ``release``), ``await_lost``,
``not_lost``, ``close_client``, and any step added later. It returns None when the step did what
the vector says, else a one-line failure. ``ConformanceContext`` gives it:

- ``context.options``: the vector's client options (a dict; durations in milliseconds).
- ``context.addresses``: the options' ``addresses`` resolved from ``READY`` (``"host:port"``).
- ``context.start(call_id, fn)``: runs ``fn()`` on a thread as the call ``call_id``; what it returns
  or raises is the call's result, which ``await`` steps compare: a value with ``.token`` is
  ``granted``, True/False is ``released``, LockTimeout is ``timeout``, a BatonError is its code.
- ``context.result_of(call_id)``: that call's value if it finished without an error, else None.
- ``context.state``: a dict for the helper's own things (its client, say).
- ``context.on_close(fn)``: ``fn()`` runs when the vector ends, whatever happened (close the client).

Until that module exists, session vectors fail with "session steps not implemented".

The asyncio clients' runners (test_session_aio_conformance.py, test_keyed_aio_conformance.py)
play the same vectors on this module's ``KitServer`` and ``Control``; the keyed one also uses
``play``, ``keyed_client_arguments``, ``outcome_from`` and ``judge_await``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from typing import Any, Awaitable, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

from baton_client import BatonError, Grant, KeyedClient, LockTimeout
from baton_client._call import Call
from conftest import REPO_ROOT

try:
    import conformance_session  # type: ignore[import-not-found]
except ImportError:  # the session helper's module is not there yet
    conformance_session = None

VECTOR_DIR = REPO_ROOT / "conformance" / "vectors"
CONTROL_LINE = re.compile(r"^conformance server control=(?P<host>[^\s:]+):(?P<port>\d+) vectors=(?P<count>\d+)")
#: How long a step's call may go on after the vector ended before the runner stops waiting.
JOIN_S = 10.0


def _load_vectors() -> List[Tuple[str, str, Dict[str, Any]]]:
    """(protocol, id, vector) for every vector of every file, in file and vector order."""
    found = []
    for path in sorted(glob.glob(str(VECTOR_DIR / "*.json"))):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        for vector in data["vectors"]:
            found.append((data["protocol"], vector["id"], vector))
    return found


VECTORS = _load_vectors()


# -- the kit server ------------------------------------------------------------------------------


class KitServer:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            ["node", str(REPO_ROOT / "bin" / "baton"), "conformance-server", "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=str(REPO_ROOT),
            start_new_session=True,
        )
        self.output: List[str] = []
        first = threading.Event()
        self.host, self.port = "", 0

        def drain() -> None:
            assert self.proc.stdout is not None
            for raw in self.proc.stdout:
                line = raw.decode("utf-8", "replace")
                self.output.append(line)
                match = CONTROL_LINE.match(line)
                if match and not first.is_set():
                    self.host, self.port = match.group("host"), int(match.group("port"))
                    first.set()

        threading.Thread(target=drain, daemon=True).start()
        deadline = time.monotonic() + 30
        while not first.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("the kit server did not start:\n" + "".join(self.output[-40:]))

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
        # Its stdout pipe too: an unclosed pipe is a ResourceWarning at exit.
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def kit() -> Iterator[KitServer]:
    server = KitServer()
    try:
        yield server
    finally:
        server.kill()


class Control:
    """One control connection: ``PLAY`` / ``READY``, ``DONE`` / verdict."""

    def __init__(self, kit: KitServer) -> None:
        self.sock = socket.create_connection((kit.host, kit.port), timeout=10)
        self.reader = self.sock.makefile("rb")

    def ask(self, line: str, timeout: float = 10.0) -> str:
        self.sock.settimeout(timeout)
        self.sock.sendall(line.encode() + b"\n")
        answer = self.reader.readline()
        if not answer:
            raise AssertionError(f"the kit server closed the control connection after {line!r}")
        return answer.decode().rstrip("\r\n")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


# -- the steps -----------------------------------------------------------------------------------


class CallRecord:
    """One call of a vector: a function run on a thread, or a keyed engine Call already started."""

    def __init__(self, fn: Optional[Callable[[], Any]] = None, call: Optional[Call] = None) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None
        self.thread: Optional[threading.Thread] = None
        if call is not None:
            call.add_done_callback(self._settled)
            return
        assert fn is not None

        def run() -> None:
            try:
                self.value = fn()
            except BaseException as error:  # noqa: BLE001 - the error is the call's outcome
                self.error = error
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def _settled(self, call: Call) -> None:
        try:
            self.value = call.outcome()
        except BaseException as error:  # noqa: BLE001
            self.error = error
        self.done.set()

    def join(self, timeout: float) -> None:
        if self.thread is not None:
            self.thread.join(timeout)
        else:
            self.done.wait(timeout)


class ConformanceContext:
    """What a step runner sees of one vector being played (see the module's docstring)."""

    def __init__(self, vector: Dict[str, Any], addresses: List[str]) -> None:
        self.vector = vector
        self.options: Dict[str, Any] = vector["client"].get("options", {})
        self.addresses = addresses
        self.state: Dict[str, Any] = {}
        self.calls: Dict[str, CallRecord] = {}
        self._closers: List[Callable[[], Any]] = []

    def start(self, call_id: str, fn: Callable[[], Any]) -> None:
        self.calls[call_id] = CallRecord(fn=fn)

    def start_call(self, call_id: str, call: Call) -> None:
        """A call started without blocking (the keyed engine's): its requests leave in step order."""
        self.calls[call_id] = CallRecord(call=call)

    def result_of(self, call_id: str) -> Any:
        record = self.calls.get(call_id)
        if record is None or not record.done.is_set() or record.error is not None:
            return None
        return record.value

    def on_close(self, fn: Callable[[], Any]) -> None:
        self._closers.append(fn)

    def close(self) -> None:
        for fn in reversed(self._closers):
            try:
                fn()
            except Exception:  # noqa: BLE001 - closing must not hide the verdict
                pass
        self._closers.clear()
        for record in self.calls.values():
            record.join(JOIN_S)


def outcome_of(record: CallRecord) -> Optional[Dict[str, Any]]:
    """The vector's outcome shape for a finished call; None while it runs."""
    if not record.done.is_set():
        return None
    return outcome_from(record.value, record.error)


def outcome_from(value: Any, error: Optional[BaseException]) -> Dict[str, Any]:
    """The vector's outcome shape for what a finished call returned or raised (shared with the
    asyncio runners)."""
    if error is not None:
        if isinstance(error, LockTimeout):
            return {"timeout": True}
        if isinstance(error, BatonError):
            return {"error": error.code}
        return {"error": f"not a BatonError: {error!r}"}
    if isinstance(value, bool):
        return {"released": value}
    token = getattr(value, "token", None)
    if isinstance(token, int):
        return {"granted": str(token)}
    return {"error": f"unexpected result {value!r}"}


def _seconds(ms: Any) -> float:
    return ms / 1000


def keyed_client_arguments(options: Dict[str, Any]) -> Dict[str, Any]:
    """A keyed vector's client options as the keyword arguments of ``KeyedClient`` (the threaded
    one and ``baton_client.aio.KeyedClient`` take the same): milliseconds become seconds, an
    option the vector does not give stays the client's default."""
    # As the TypeScript runner does: a vector without an identity option sends none.
    arguments: Dict[str, Any] = {"identity": options.get("identity")}
    for option, keyword in (
        ("reconnect_interval_ms", "reconnect_interval"),
        ("release_retry_for_ms", "release_retry_for"),
        ("release_retry_interval_ms", "release_retry_interval"),
        ("connect_timeout_ms", "connect_timeout"),
    ):
        if option in options:
            arguments[keyword] = _seconds(options[option])
    return arguments


def _keyed_client(context: ConformanceContext) -> KeyedClient:
    return KeyedClient(context.addresses, **keyed_client_arguments(context.options))


def run_keyed_step(step: Dict[str, Any], context: ConformanceContext) -> Optional[str]:
    """Keyed calls go through the engine behind ``KeyedClient`` (what ``acquire``, ``try_acquire``
    and ``Grant.release`` block on), which starts a call without blocking: several calls of a
    vector are then sent in step order, as the vector's script expects them, which calls started
    on threads of their own would not guarantee."""
    client: KeyedClient = context.state["client"]
    engine = client._engine
    if "call" in step:
        call = step["call"]
        try:
            if call == "acquire":
                wait = None if step["wait_ms"] == 0 else _seconds(step["wait_ms"])
                context.start_call(step["id"], engine.start_acquire(step["name"], _seconds(step["lease_ms"]), wait))
                return None
            if call == "try_acquire":
                # On the wire and in outcome what client.try_acquire does (it maps the timeout to None).
                context.start_call(step["id"], engine.start_acquire(step["name"], _seconds(step["lease_ms"]), None, try_lock=True))
                return None
            if call == "release":
                grant = context.result_of(step["of"])
                if not isinstance(grant, Grant):
                    return f"release of {step['of']}, which holds nothing"
                context.start_call(step["id"], grant._start_release())
                return None
        except BatonError as error:  # refused before sending: the call's outcome
            context.start(step["id"], _raiser(error))
            return None
        return f"{call} on a keyed vector"
    if step.get("close_client"):
        client.close()
        return None
    return f"unknown keyed step {json.dumps(step)}"


def _raiser(error: BaseException) -> Callable[[], Any]:
    def fail() -> Any:
        raise error

    return fail


def run_common_step(step: Dict[str, Any], context: ConformanceContext) -> Optional[str]:
    """``await`` and ``sleep_ms``, the same for both protocols."""
    if "sleep_ms" in step:
        time.sleep(_seconds(step["sleep_ms"]))
        return None
    record = context.calls.get(step["await"])
    if record is None:
        return "no such call"
    record.done.wait(_seconds(step["within_ms"]))
    return judge_await(step, outcome_of(record))


def judge_await(step: Dict[str, Any], got: Optional[Dict[str, Any]]) -> Optional[str]:
    """An ``await`` step's verdict on the awaited call's outcome (None: it had not finished)."""
    if got is None:
        return f"not finished within {step['within_ms']} ms"
    wanted = step.get("outcome_any") or ([step["outcome"]] if "outcome" in step else [])
    return None if got in wanted else f"got {json.dumps(got)}"


def run_session_step(step: Dict[str, Any], context: ConformanceContext) -> Optional[str]:
    if conformance_session is None:
        return "session steps not implemented"
    return conformance_session.run_step(step, context)


def step_failure(index: int, step: Dict[str, Any], problem: str) -> str:
    """The line a failed client step gets, in every runner (sync and asyncio alike)."""
    return f"client step {index} {json.dumps(step)}: {problem}"


async def drive_async(vector: Dict[str, Any], run: Callable[[Dict[str, Any]], Awaitable[Optional[str]]]) -> List[str]:
    """The asyncio runners' step loop: each client step through ``run``; one line per step that failed."""
    failures: List[str] = []
    for index, step in enumerate(vector["client"]["steps"], start=1):
        problem = await run(step)
        if problem is not None:
            failures.append(step_failure(index, step, problem))
    return failures


def drive(protocol: str, vector: Dict[str, Any], addresses: List[str]) -> List[str]:
    """Runs every client step; one line per step that failed."""
    context = ConformanceContext(vector, addresses)
    failures: List[str] = []
    try:
        if protocol == "keyed":
            client = _keyed_client(context)
            context.state["client"] = client
            context.on_close(client.close)
            run_step: Callable[[Dict[str, Any], ConformanceContext], Optional[str]] = run_keyed_step
        else:
            run_step = run_session_step
        for index, step in enumerate(vector["client"]["steps"], start=1):
            if "await" in step or "sleep_ms" in step:
                problem = run_common_step(step, context)
            else:
                problem = run_step(step, context)
            if problem is not None:
                failures.append(step_failure(index, step, problem))
    finally:
        context.close()
    return failures


def _ready_addresses(line: str) -> Dict[str, str]:
    verb, *pairs = line.split(" ")
    if verb != "READY":
        raise AssertionError(f"the kit server answered {line!r}")
    return dict(pair.split("=", 1) for pair in pairs)  # type: ignore[misc]


def play(control: Control, vector_id: str, vector: Dict[str, Any]) -> List[str]:
    """``PLAY``s the vector; the addresses of its client's ``addresses`` option (default
    ``["n1"]``), resolved from ``READY``."""
    nodes = _ready_addresses(control.ask(f"PLAY {vector_id}"))
    options = vector["client"].get("options", {})
    return [nodes.get(node, node) for node in options.get("addresses", ["n1"])]


@pytest.mark.skipif(not VECTORS, reason="no conformance vectors in conformance/vectors")
@pytest.mark.parametrize("protocol,vector_id,vector", VECTORS, ids=[v[1] for v in VECTORS])
def test_vector(kit: KitServer, protocol: str, vector_id: str, vector: Dict[str, Any]) -> None:
    control = Control(kit)
    try:
        addresses = play(control, vector_id, vector)
        failures = drive(protocol, vector, addresses)
        verdict = control.ask("DONE")
    finally:
        control.close()
    assert {"failures": failures, "verdict": verdict} == {"failures": [], "verdict": "PASS"}
