"""The conformance kit's session vectors, played by the kit server (``baton conformance-server``)
against the threaded session client (steps: conformance_session.py)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import conformance_session
from conftest import BATON_BIN, REPO_ROOT

VECTORS_DIR = REPO_ROOT / "conformance" / "vectors"
CONTROL = re.compile(r"conformance server control=(\S+) vectors=(\d+)")


def _session_vectors() -> List[Dict[str, Any]]:
    vectors: List[Dict[str, Any]] = []
    for path in sorted(VECTORS_DIR.glob("*.json")) if VECTORS_DIR.is_dir() else []:
        area = json.loads(path.read_text())
        if area.get("protocol") == "session":
            vectors.extend(area["vectors"])
    return vectors


VECTORS = _session_vectors()


class KitServer:
    """``node bin/baton conformance-server --port 0`` in its own process group, and one control
    connection."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            ["node", str(BATON_BIN), "conformance-server", "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=str(REPO_ROOT),
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().decode()
        match = CONTROL.search(first)
        if match is None:
            self.kill()
            raise RuntimeError(f"the kit server printed {first!r}")
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()  # type: ignore[union-attr]
        host, _, port = match.group(1).rpartition(":")
        self.control = socket.create_connection((host, int(port)), timeout=60)
        self.lines = self.control.makefile("rb")

    def ask(self, line: str) -> str:
        self.control.sendall((line + "\n").encode())
        answer = self.lines.readline().decode().rstrip("\r\n")
        if not answer:
            raise RuntimeError(f"the kit server closed the control connection after {line!r}")
        return answer

    def play(self, vector_id: str) -> Dict[str, str]:
        answer = self.ask(f"PLAY {vector_id}")
        assert answer.startswith("READY"), answer
        return dict(part.split("=", 1) for part in answer.split()[1:])

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def kit() -> Iterator[KitServer]:
    server = KitServer()
    try:
        yield server
    finally:
        server.control.close()
        server.kill()


@pytest.mark.skipif(not VECTORS, reason="no session vectors in conformance/vectors")
@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_session_vector(kit: KitServer, vector: Dict[str, Any]) -> None:
    nodes = kit.play(vector["id"])
    context = conformance_session.new_context(vector["client"].get("options", {}), nodes)
    problems: List[str] = []
    try:
        for index, step in enumerate(vector["client"]["steps"], 1):
            problem = conformance_session.run_step(step, context)
            if problem is not None:
                problems.append(f"client step {index} {json.dumps(step)}: {problem}")
    finally:
        conformance_session.close(context)
    verdict = kit.ask("DONE")
    assert not problems and verdict == "PASS", f"{vector['id']}: {problems} kit: {verdict}"
