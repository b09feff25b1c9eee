"""Real Baton daemons for the Python client's tests.

Fixtures:

- ``baton_server``: one ``baton serve`` shared by a test module (tests use their own lock names).
- ``start_baton``: a factory for a daemon of a test's own, with extra flags
  (``start_baton("--token-floor", "9007199254740993")``); stopped when the test ends.
- ``baton_cluster``: three nodes ``a`` (highest priority), ``b``, ``c`` of one cluster, settled with
  ``a`` active; ``kill9(id)``, ``sigterm(id)``, ``wait_active(id)``; stopped when the test ends.

Each daemon is ``node <repo>/bin/baton serve`` on port 0 everywhere (a cluster's ports come from
cluster.json), in its own process group, killed (SIGKILL of the group) in teardown. The repo root
is found from this file, so the tests run from any directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

PYTHON_CLIENT_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PYTHON_CLIENT_DIR.parents[1]
BATON_BIN = REPO_ROOT / "bin" / "baton"

# The tests import the package from the source tree: no install needed to run them.
if str(PYTHON_CLIENT_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_CLIENT_DIR))

ADMIN_TOKEN = "python-client-test-admin-token-0123456789"
#: How long a daemon may take to print its serving line on a busy machine.
START_TIMEOUT_S = 30.0
SERVING = re.compile(
    r"^baton serving lock=(?P<lock>\S+) session=(?P<session>\S+) http=(?P<http>\S+)"
)


def _split(address: str) -> Tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


class BatonProcess:
    """One running (or stopped) ``baton serve``: its addresses, its output, its signals."""

    def __init__(self, args: List[str], env: Optional[Dict[str, str]] = None, name: str = "baton") -> None:
        self.args = args
        self.env = env
        self.name = name
        self.proc: Optional[subprocess.Popen] = None
        self.lock_address = ""
        self.session_address = ""
        self.http_address = ""
        self.admin_token = ADMIN_TOKEN
        self._output: List[str] = []
        self._output_lock = threading.Lock()
        self._serving = threading.Event()

    # -- life cycle ---------------------------------------------------------------------------

    def start(self, timeout: float = START_TIMEOUT_S) -> "BatonProcess":
        """Spawns the daemon and returns once it printed its serving line."""
        env = dict(os.environ)
        env.pop("BATON_READ_TOKEN", None)
        if self.env:
            env.update(self.env)
        self._serving.clear()
        self.proc = subprocess.Popen(
            ["node", str(BATON_BIN), *self.args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(REPO_ROOT),
            # Its own process group: teardown kills whatever it started along with it.
            start_new_session=True,
        )
        # A reader thread drains the pipe for the process's whole life: a full pipe would block
        # the daemon's logging and stall it.
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while not self._serving.wait(0.05):
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode} before serving:\n{self.output()}")
            if time.monotonic() > deadline:
                self.kill9()
                raise RuntimeError(f"{self.name} printed no serving line in {timeout} s:\n{self.output()}")
        return self

    def _drain(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            with self._output_lock:
                self._output.append(line)
                if len(self._output) > 2000:
                    del self._output[:1000]
            match = SERVING.match(line)
            if match and not self._serving.is_set():
                self.lock_address = match.group("lock")
                self.session_address = match.group("session")
                self.http_address = match.group("http")
                self._serving.set()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc else None

    def kill9(self) -> None:
        """SIGKILL of the whole process group; returns once the daemon is gone."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)

    def sigterm(self, timeout: float = 20.0) -> Optional[int]:
        """SIGTERM (a graceful stop: an active hands off first); its exit code. Killed past
        ``timeout``."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            raise

    def signal(self, sig: int) -> None:
        """Any signal to the group (SIGSTOP freezes the daemon, SIGCONT lets it run)."""
        assert self.proc is not None
        os.killpg(self.proc.pid, sig)

    def output(self, lines: int = 60) -> str:
        with self._output_lock:
            return "".join(self._output[-lines:])

    # -- addresses and the HTTP API -------------------------------------------------------------

    @property
    def lock_port(self) -> int:
        return _split(self.lock_address)[1]

    @property
    def session_port(self) -> int:
        return _split(self.session_address)[1]

    def api(self, path: str, method: str = "GET", body: Any = None, timeout: float = 5.0) -> Tuple[int, Any]:
        """A request to the ops API with the admin token: (status, JSON body or text)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://{self.http_address}{path}", data=data, method=method)
        request.add_header("authorization", f"Bearer {self.admin_token}")
        if data is not None:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                status, text = reply.status, reply.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def holder(self, name: str) -> Optional[Dict[str, Any]]:
        """The holder of ``name`` as this node sees it (a standby reads its replica); None when free."""
        status, body = self.api(f"/api/v1/locks/{urllib.request.quote(name, safe='')}")
        if status == 404:
            return None
        if status != 200:
            raise RuntimeError(f"GET /api/v1/locks/{name} answered {status}: {body}")
        return body.get("holder")


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Polls ``check`` until it returns something truthy (exceptions count as not yet)."""
    deadline = time.monotonic() + timeout
    last: Optional[BaseException] = None
    while True:
        try:
            value = check()
            if value:
                return value
        except Exception as error:  # noqa: BLE001 - a node still starting answers with errors
            last = error
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}" + (f" (last error: {last})" if last else ""))
        time.sleep(interval)


def serve_args(data_dir: str, *extra: str) -> List[str]:
    return [
        "serve",
        "--no-console",
        "--data-dir",
        data_dir,
        "--lock-port",
        "0",
        "--session-port",
        "0",
        "--http-port",
        "0",
        "--admin-token",
        ADMIN_TOKEN,
        *extra,
    ]


@pytest.fixture
def start_baton() -> Iterator[Callable[..., BatonProcess]]:
    """A factory: ``start_baton(*extra_flags)`` starts a daemon of the test's own."""
    started: List[BatonProcess] = []
    dirs: List[str] = []

    def start(*extra: str) -> BatonProcess:
        data_dir = tempfile.mkdtemp(prefix="baton-py-")
        dirs.append(data_dir)
        node = BatonProcess(serve_args(data_dir, *extra))
        started.append(node)
        return node.start()

    yield start
    for node in started:
        node.kill9()
    for data_dir in dirs:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def baton_server() -> Iterator[BatonProcess]:
    """One daemon for the whole test module."""
    data_dir = tempfile.mkdtemp(prefix="baton-py-")
    node = BatonProcess(serve_args(data_dir))
    try:
        yield node.start()
    finally:
        node.kill9()
        shutil.rmtree(data_dir, ignore_errors=True)


# -- a three-node cluster ------------------------------------------------------------------------


def _free_ports(count: int) -> List[int]:
    """Ports free right now on 127.0.0.1, all bound at once (so they differ), then given back."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class BatonCluster:
    """Nodes ``a``, ``b``, ``c`` of one cluster (priority in that order), one cluster.json."""

    IDS = ("a", "b", "c")

    def __init__(self, peer_timeout_ms: int = 1000, extra_args: Tuple[str, ...] = ()) -> None:
        self.dir = tempfile.mkdtemp(prefix="baton-py-cluster-")
        self.peer_timeout_ms = peer_timeout_ms
        self.config_path = os.path.join(self.dir, "cluster.json")
        ports = _free_ports(4 * len(self.IDS))
        peers = []
        self.nodes: Dict[str, BatonProcess] = {}
        for i, node_id in enumerate(self.IDS):
            lock, session, peer, http = ports[i * 4 : i * 4 + 4]
            peers.append(
                {"id": node_id, "host": "127.0.0.1", "lockPort": lock, "sessionPort": session, "peerPort": peer, "httpPort": http}
            )
            args = [
                "serve",
                "--config",
                self.config_path,
                "--node",
                node_id,
                "--no-console",
                "--data-dir",
                os.path.join(self.dir, node_id),
                "--peer-timeout",
                f"{peer_timeout_ms}ms",
                *extra_args,
            ]
            self.nodes[node_id] = BatonProcess(args, env={"BATON_ADMIN_TOKEN": ADMIN_TOKEN}, name=f"node {node_id}")
        with open(self.config_path, "w") as f:
            json.dump({"peers": peers}, f, indent=2)

    def start(self) -> "BatonCluster":
        # Node a first, so it is the one the others find active.
        self.nodes["a"].start()
        for node_id in self.IDS[1:]:
            self.nodes[node_id].start()
        return self

    def node(self, node_id: str) -> BatonProcess:
        return self.nodes[node_id]

    def lock_addresses(self, *ids: str) -> List[str]:
        return [self.nodes[i].lock_address for i in (ids or self.IDS)]

    def session_addresses(self, *ids: str) -> List[str]:
        return [self.nodes[i].session_address for i in (ids or self.IDS)]

    def view(self, node_id: str) -> Dict[str, Any]:
        status, body = self.nodes[node_id].api("/api/v1/cluster", timeout=2.0)
        if status != 200:
            raise RuntimeError(f"node {node_id}: GET /api/v1/cluster answered {status}: {body}")
        return body

    def wait_active(self, node_id: str, timeout: float = 10.0) -> None:
        """Until ``node_id`` says it is the active node."""
        wait_for(lambda: self.view(node_id).get("phase") == "active", timeout, f"{node_id} to be active")

    def wait_settled(self, active: str = "a", timeout: float = 20.0) -> None:
        """Until every running node agrees ``active`` is active and sees the others alive, in sync."""

        def settled() -> bool:
            for node_id, node in self.nodes.items():
                if not node.running:
                    continue
                view = self.view(node_id)
                phase = "active" if node_id == active else "standby"
                if view.get("phase") != phase or view.get("active") != active:
                    return False
                for peer in view.get("nodes", []):
                    if not self.nodes[peer["id"]].running:
                        continue
                    if not peer.get("alive") or not peer.get("inSync"):
                        return False
            return True

        wait_for(settled, timeout, f"{active} active with in-sync standbys")

    def wait_replicated(self, name: str, token: int, ids: Tuple[str, ...], timeout: float = 10.0) -> None:
        """Until every given node shows ``token`` holding ``name``."""

        def replicated() -> bool:
            for node_id in ids:
                holder = self.nodes[node_id].holder(name)
                if holder is None or str(holder.get("token")) != str(token):
                    return False
            return True

        wait_for(replicated, timeout, f"{name} held by token {token} on {', '.join(ids)}")

    def kill9(self, node_id: str) -> None:
        self.nodes[node_id].kill9()

    def sigterm(self, node_id: str, timeout: float = 20.0) -> Optional[int]:
        return self.nodes[node_id].sigterm(timeout)

    def logs(self, lines: int = 40) -> str:
        return "\n".join(f"--- node {i} ---\n{n.output(lines)}" for i, n in self.nodes.items())

    def close(self) -> None:
        for node in self.nodes.values():
            node.kill9()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def baton_cluster(request: pytest.FixtureRequest) -> Iterator[BatonCluster]:
    """Three nodes, settled with ``a`` active; logs printed when the test fails."""
    cluster: Optional[BatonCluster] = None
    last: Optional[BaseException] = None
    for _ in range(3):  # a port taken between choosing it and binding it: try new ports
        cluster = BatonCluster()
        try:
            cluster.start()
            cluster.wait_settled("a")
            break
        except Exception as error:  # noqa: BLE001
            last = error
            print(cluster.logs())
            cluster.close()
            cluster = None
    if cluster is None:
        raise RuntimeError(f"the cluster did not start: {last}")
    try:
        yield cluster
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            print(f"cluster logs for the failed test:\n{cluster.logs()}")
        cluster.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    """Keeps each phase's report on the item, so fixtures can see whether the test failed."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
