"""The session protocol on the wire, as pure functions: server lines in, client lines out.

The client's half of docs/protocol.md "Session protocol" (the TypeScript twin is
lib/protocol/session-reply-parser.ts and the client half of session-codec.ts). Nothing here
touches a socket or a clock, so every rule is testable with plain strings.

Anything a client cannot read (a 21-digit token, an unknown line, a line with no end in sight,
bytes that are not UTF-8) is a ``BatonError`` with the shared name ``protocol-error``: never a
hang, never a crash, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Union

from ._address import Address, format_address, parse_address
from .errors import BatonError, error_from_session_code

#: Server lines are short (an error text at most a few hundred bytes); a longer run without a
#: newline means we are not talking to Baton, and buffering it (a 10 MB line) helps nobody.
MAX_LINE_BYTES = 64 * 1024
#: The largest fencing token: tokens are u64 and stay exact as Python ints.
U64_MAX = (1 << 64) - 1
#: The session protocol's default port (`baton serve --session-port`).
#: The sign of life; it takes no fields.
HEARTBEAT_LINE = "HEARTBEAT"

# ASCII only: str.isdigit() and int() also take other scripts' digits, spaces and underscores.
_DIGITS = re.compile(r"[0-9]+\Z")
_HEX = re.compile(r"[0-9a-fA-F]+\Z")



@dataclass(frozen=True)
class Acquired:
    """``ACQUIRED <token>``: held (answer, heartbeat answer or pushed grant)."""

    token: int


@dataclass(frozen=True)
class Waiting:
    """``WAITING <position>``: queued; 1 = next."""

    position: int


@dataclass(frozen=True)
class ServerError:
    """``ERROR 0x0N <text>``: the server ends the session; ``error.code`` is the shared name."""

    error: BatonError


@dataclass(frozen=True)
class Redirect:
    """``REDIRECT host:port``: not the active node; any claim here has ended."""

    address: Address


@dataclass(frozen=True)
class Moved:
    """``MOVED host:port``: a resumable claim went with a handoff to that node; RESUME it there."""

    address: Address


SessionReply = Union[Acquired, Waiting, ServerError, Redirect, Moved]


def protocol_error(text: str) -> BatonError:
    return BatonError("protocol-error", text)


def _shown(line: str) -> str:
    """A bounded, printable rendering of server text for an error message."""
    cut = line if len(line) <= 120 else line[:120] + "..."
    return repr(cut)


def parse_u64(text: str) -> Optional[int]:
    """1 to 20 ASCII digits (leading zeros allowed) naming a value <= 2^64-1; else None."""
    if not 0 < len(text) <= 20 or not _DIGITS.match(text):
        return None
    value = int(text)
    return value if value <= U64_MAX else None


def _parse_position(text: str) -> Optional[int]:
    if not 0 < len(text) <= 15 or not _DIGITS.match(text):
        return None
    value = int(text)
    return value if value > 0 else None


def _parse_error_code(text: str) -> Optional[int]:
    """``0x`` and 1 to 4 hex digits, as the server writes its codes."""
    if not 3 <= len(text) <= 6 or text[0] != "0" or text[1] not in "xX":
        return None
    digits = text[2:]
    return int(digits, 16) if _HEX.match(digits) else None


def parse_reply(line: str) -> SessionReply:
    """One server line (without its line ending). Raises ``BatonError('protocol-error')``."""
    word, space, rest = line.partition(" ")
    if word == "ACQUIRED":
        token = parse_u64(rest)
        if token is None:
            raise protocol_error(f"ACQUIRED with a bad token (a u64 of 1 to 20 digits): {_shown(line)}")
        return Acquired(token)
    if word == "WAITING":
        position = _parse_position(rest)
        if position is None:
            raise protocol_error(f"WAITING with a bad position: {_shown(line)}")
        return Waiting(position)
    if word == "ERROR":
        code_text, _, text = rest.partition(" ")
        code = _parse_error_code(code_text)
        if code is None:
            raise protocol_error(f"ERROR with a bad code: {_shown(line)}")
        return ServerError(error_from_session_code(code, text))
    if word in ("REDIRECT", "MOVED"):
        address = parse_address(rest)
        if address is None:
            raise protocol_error(f"{word} to an unreadable address: {_shown(line)}")
        return Redirect(address) if word == "REDIRECT" else Moved(address)
    raise protocol_error(f"unknown reply: {_shown(line)}")


class LineReader:
    """Splits received bytes into lines (``\\n`` or ``\\r\\n``), bounded and strictly UTF-8.

    ``feed`` returns the complete lines so far; it raises ``protocol-error`` for a line longer
    than ``MAX_LINE_BYTES`` (as soon as the buffer passes it: a 10 MB line is never held) and
    for bytes that are not UTF-8. Empty lines are skipped, as the TypeScript client does.
    """

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_line_bytes

    def feed(self, data: bytes) -> List[str]:
        self._buffer += data
        lines: List[str] = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                break
            raw = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if len(raw) > self._max:
                raise protocol_error(f"a server line of {len(raw)} bytes (at most {self._max})")
            if raw:
                lines.append(_decode(raw))
        if len(self._buffer) > self._max:
            raise protocol_error(f"a server line passed {self._max} bytes without its end")
        return lines

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line (a half line the server never finished)."""
        return len(self._buffer)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise protocol_error(f"a server line that is not UTF-8 ({error.reason} at byte {error.start})") from None


# --- the client's lines, without the line ending (the transport adds "\n") ---


def encode_client(identity: str) -> str:
    """``CLIENT <identity>``: names the claim, sent in the same write as ACQUIRE or RESUME."""
    return f"CLIENT {identity}"


def encode_acquire(name: str, lease_ms: int, claim_key: Optional[str] = None) -> str:
    """``ACQUIRE <name> <lease_ms> [<claim_key>]``: a claim key makes the claim resumable."""
    return f"ACQUIRE {name} {lease_ms}" if claim_key is None else f"ACQUIRE {name} {lease_ms} {claim_key}"


def encode_resume(name: str, claim_key: str) -> str:
    """``RESUME <name> <claim_key>``: takes a kept claim up on a new connection."""
    return f"RESUME {name} {claim_key}"

