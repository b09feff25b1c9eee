"""A tiny scripted server on 127.0.0.1 for the bytes a real daemon never sends.

Each accepted connection runs ``handler(conn)`` on a thread of its own; ``close()`` ends every
connection and the listener (tests call it in teardown).
"""

from __future__ import annotations

import socket
import threading
from typing import Callable, List, Optional


class FakeConn:
    def __init__(self, sock: socket.socket, index: int) -> None:
        self.sock = sock
        self.index = index
        self._buffer = b""
        self.received: List[str] = []

    def readline(self, timeout: float = 10.0) -> Optional[str]:
        """The client's next line (without its ending), or None when it closed or was silent."""
        self.sock.settimeout(timeout)
        while b"\n" not in self._buffer:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return None
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        text = line.decode("utf-8", "replace").rstrip("\r")
        self.received.append(text)
        return text

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def wait_closed(self, timeout: float = 10.0) -> bool:
        """Reads until the client closes (True) or ``timeout`` passes (False)."""
        self.sock.settimeout(timeout)
        try:
            while self.sock.recv(65536):
                pass
            return True
        except socket.timeout:
            return False
        except OSError:
            return True


class FakeServer:
    def __init__(self, handler: Callable[[FakeConn], None]) -> None:
        self._handler = handler
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.conns: List[FakeConn] = []
        self._closed = False
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                conn = FakeConn(sock, len(self.conns))
                self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: FakeConn) -> None:
        try:
            self._handler(conn)
        except Exception:  # noqa: BLE001 - a handler ends with its connection
            pass

    def close(self) -> None:
        self._closed = True
        try:
            # Shut first: a close alone leaves a listener blocked in accept() taking connections.
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._listener.close()
        except OSError:
            pass
        with self._lock:
            conns = list(self.conns)
        for conn in conns:
            try:
                conn.close()
            except OSError:
                pass

    def __enter__(self) -> "FakeServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
