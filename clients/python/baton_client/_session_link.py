"""One session connection for the threaded client: a TCP socket with its permanent reader
thread, which does the connect too, so nothing else ever blocks on it."""

from __future__ import annotations

import socket
import threading
from typing import Any, Callable, Optional, Tuple

from ._session_wire import Address, LineReader, format_address
from .errors import BatonError

#: A closed connection waits this long for the server's side of the close, then is cut.
LINGER = 1.0


class SocketLink:
    """One TCP connection with its permanent reader thread, which also does the connect (so
    nothing else ever blocks on it) and posts ``opened``/``line``/``bad``/``closed`` events."""

    def __init__(
        self,
        generation: int,
        address: Address,
        post: Callable[[Tuple[Any, ...]], None],
        connect_timeout: float,
    ) -> None:
        self.generation = generation
        self.address = address
        self._post = post
        self._connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._sock: Optional[socket.socket] = None
        self._dropped = False
        #: LINGER ran out after the drop: a connect that completes now is closed at once.
        self._cut_done = False
        self._thread = threading.Thread(
            target=self._run, name=f"baton-session-reader {format_address(address)}", daemon=True
        )
        self._thread.start()

    def send(self, text: str) -> None:
        with self._lock:
            sock = None if self._dropped else self._sock
        if sock is None:
            return
        try:
            sock.sendall((text + "\n").encode("utf-8"))
        except OSError:
            pass  # the reader sees the connection end and reports it

    def drop(self) -> None:
        """Leaves the connection with a FIN (which is the release), then reads what is left until
        the server closes, so no unread byte turns the close into a reset (a reset keeps a
        resumable claim parked on the server); cut after LINGER whatever happens."""
        with self._lock:
            if self._dropped:
                return
            self._dropped = True
            sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        timer = threading.Timer(LINGER, self._cut)
        timer.daemon = True
        timer.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _cut(self) -> None:
        with self._lock:
            self._cut_done = True
            sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _run(self) -> None:
        try:
            sock = socket.create_connection(self.address, timeout=self._connect_timeout)
        except OSError as error:
            self._post(("closed", self.generation, BatonError("connection-lost", f"{format_address(self.address)}: {error}")))
            return
        sock.settimeout(None)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        except OSError:
            pass
        with self._lock:
            self._sock = sock
            dropped = self._dropped
            cut = self._cut_done
        if dropped:  # left while connecting: say goodbye at once
            try:
                sock.shutdown(socket.SHUT_RDWR if cut else socket.SHUT_WR)
            except OSError:
                pass
        else:
            self._post(("opened", self.generation))
        reader = LineReader()
        unreadable = False
        error: Optional[BaseException] = None
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                if unreadable:
                    continue  # drain, so the close is a FIN and not a reset
                try:
                    lines = reader.feed(data)
                except BatonError as bad:
                    unreadable = True
                    self._post(("bad", self.generation, bad))
                    continue
                for line in lines:
                    self._post(("line", self.generation, line))
        except OSError as failure:
            error = failure
        finally:
            try:
                sock.close()
            except OSError:
                pass
        if reader.pending and error is None:
            error = BatonError("connection-lost", f"{format_address(self.address)} closed in the middle of a line")
        self._post(("closed", self.generation, error))
