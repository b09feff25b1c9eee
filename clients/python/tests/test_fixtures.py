"""The fixtures themselves: a daemon that serves, and a cluster that settles."""

from __future__ import annotations

import socket

from conftest import BatonCluster, BatonProcess


def _roundtrip(address: str, line: bytes) -> bytes:
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(line)
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data


def test_single_node_serves_the_keyed_protocol(baton_server: BatonProcess) -> None:
    assert _roundtrip(baton_server.lock_address, b"A fixtures/one 5 0\n").startswith(b"A fixtures/one ")
    status, _ = baton_server.api("/api/v1/cluster")
    assert status == 200
