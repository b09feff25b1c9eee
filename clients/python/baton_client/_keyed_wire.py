"""The keyed protocol's bytes: request lines out, reply lines in. Pure functions, no I/O.

Replies are parsed into small typed values. Anything a client cannot read (a token that is not
a u64, an unknown op, bad UTF-8, a line longer than any the server writes) is a ``Malformed``
value, never an exception or a hang: matching pipelined replies to requests is only sound while
every line is understood, so the connection that sent it must be dropped.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Union

from ._address import Address, parse_address

U64_MAX = (1 << 64) - 1

#: The longest line a client buffers without finding its end. The server's replies are short
#: (a 250-byte key, a 20-digit token, an error text); a longer line is a broken server, and is
#: refused instead of buffered (a 10 MB line must not cost 10 MB).
MAX_REPLY_LINE_BYTES = 64 * 1024


# -- requests -------------------------------------------------------------------------------


def acquire_line(key: str, lease_wire: str, wait_wire: str) -> bytes:
    return f"A {key} {lease_wire} {wait_wire}\n".encode("utf-8")


def release_line(key: str, token: int) -> bytes:
    return f"R {key} {token}\n".encode("utf-8")


def identity_line(identity: str) -> bytes:
    return f"I {identity}\n".encode("utf-8")


# -- replies --------------------------------------------------------------------------------


class Granted(NamedTuple):
    key: str
    token: int

    @property
    def slot(self) -> str:
        return "A " + self.key


class TimedOut(NamedTuple):
    key: str

    @property
    def slot(self) -> str:
        return "A " + self.key


class Released(NamedTuple):
    key: str

    @property
    def slot(self) -> str:
        return "R " + self.key


class Stale(NamedTuple):
    key: str

    @property
    def slot(self) -> str:
        return "R " + self.key


class RequestError(NamedTuple):
    """``E <op> <key> <code> <text>``: about one request; the connection stays usable."""

    op: str
    key: str
    code: str
    text: str

    @property
    def slot(self) -> str:
        return self.op + " " + self.key


class ConnectionError_(NamedTuple):
    """``E - - <code> <text>``: about the connection; the server closes it after this line."""

    code: str
    text: str


class Redirect(NamedTuple):
    """``M host:port``: this node is a standby; the active node is there."""

    address: Address


class IdentityOk(NamedTuple):
    """``I OK``."""


class Malformed(NamedTuple):
    """Bytes a client cannot read: a protocol error."""

    line: str
    why: str


KeyedReply = Union[Granted, TimedOut, Released, Stale, RequestError, ConnectionError_, Redirect, IdentityOk, Malformed]

_IDENTITY_OK = IdentityOk()


def parse_u64(text: str) -> Optional[int]:
    """1 to 20 decimal digits (leading zeros allowed), at most 2^64-1; else None."""
    if not (0 < len(text) <= 20) or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value <= U64_MAX else None


def _show(line: str) -> str:
    """A line as it goes into an error message: printable, and short."""
    shown = line if len(line) <= 200 else line[:200] + "..."
    return repr(shown)


def parse_reply(raw: bytes) -> KeyedReply:
    """One server line (without its line ending) into a reply value."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Malformed(repr(raw[:200]), "bad UTF-8")
    if len(line) < 3 or line[1] != " ":
        return Malformed(_show(line), "no op")
    op = line[0]
    if op == "A":
        space = line.find(" ", 2)
        if space <= 2:
            return Malformed(_show(line), "grant without key or token")
        token = parse_u64(line[space + 1 :])
        if token is None:
            return Malformed(_show(line), "grant with a token that is not a u64")
        return Granted(line[2:space], token)
    if op == "T":
        key = line[2:]
        if " " in key:
            return Malformed(_show(line), "timeout with extra fields")
        return TimedOut(key)
    if op == "R":
        space = line.rfind(" ")
        if space <= 2:
            return Malformed(_show(line), "release reply without key or outcome")
        key, outcome = line[2:space], line[space + 1 :]
        if outcome == "OK":
            return Released(key)
        if outcome == "STALE":
            return Stale(key)
        return Malformed(_show(line), "release reply neither OK nor STALE")
    if op == "E":
        return _parse_error(line)
    if op == "I":
        return _IDENTITY_OK if line == "I OK" else Malformed(_show(line), "identity reply other than I OK")
    if op == "M":
        address = parse_address(line[2:])
        return Redirect(address) if address else Malformed(_show(line), "redirect to an unreadable address")
    return Malformed(_show(line), "unknown reply op")


def _parse_error(line: str) -> KeyedReply:
    """``E <op> <key> <code> <text>``; op and key ``-`` mean the whole connection."""
    op_end = line.find(" ", 2)
    key_end = -1 if op_end < 0 else line.find(" ", op_end + 1)
    if op_end <= 2 or key_end <= op_end + 1:
        return Malformed(_show(line), "error without op or key")
    name_end = line.find(" ", key_end + 1)
    code = line[key_end + 1 :] if name_end < 0 else line[key_end + 1 : name_end]
    if not code:
        return Malformed(_show(line), "error without a code")
    text = "" if name_end < 0 else line[name_end + 1 :]
    op, key = line[2:op_end], line[op_end + 1 : key_end]
    if op == "-" and key == "-":
        return ConnectionError_(code, text)
    return RequestError(op, key, code, text)


class LineTooLong(Exception):
    """More than MAX_REPLY_LINE_BYTES without a line ending."""


class LineSplitter:
    """Splits a byte stream into lines (``\\n`` or ``\\r\\n``), holding at most one partial line,
    and refusing one that grows past ``limit`` bytes."""

    def __init__(self, limit: int = MAX_REPLY_LINE_BYTES) -> None:
        self._limit = limit
        self._partial = b""

    def feed(self, data: bytes) -> List[bytes]:
        """The complete lines in ``data`` (after what was held back); raises LineTooLong."""
        buffer = self._partial + data if self._partial else data
        lines = buffer.split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > self._limit:
            self._partial = b""
            raise LineTooLong(f"a reply line longer than {self._limit} bytes")
        for i, line in enumerate(lines):
            if len(line) > self._limit:
                raise LineTooLong(f"a reply line longer than {self._limit} bytes")
            if line.endswith(b"\r"):
                lines[i] = line[:-1]
        return lines

    @property
    def pending_bytes(self) -> int:
        """Bytes of a line begun and not finished."""
        return len(self._partial)

