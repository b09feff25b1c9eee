"""Baton's one error vocabulary, as the Python client raises it.

The names are the shared error names of Baton (``lib/errors.ts``): the keyed protocol's ``E``
codes, the session protocol's ``ERROR 0x0N`` codes mapped to their names, and the client-side
outcomes (``lock-timeout``, ``connection-lost``, ``client-closed``).
"""

from __future__ import annotations

from typing import Dict, Optional

#: Every shared error name the wire protocols and the clients use, with which side's condition it
#: is ("server": reconnect and retry elsewhere; "client": fix the call or give up).
ERROR_SIDES: Dict[str, str] = {
    "server-going-away": "server",
    "protocol-error": "client",
    "lease-expired": "client",
    "force-released": "client",
    "kicked": "client",
    "too-many-connections": "server",
    "io-timeout": "client",
    "unknown-op": "client",
    "bad-key": "client",
    "bad-lease": "client",
    "bad-wait": "client",
    "bad-token": "client",
    "line-too-long": "client",
    "backlog-full": "client",
    "session-claim": "client",
    "stale-token": "client",
    "tokens-exhausted": "server",
    "storage-unavailable": "server",
    "claim-unknown": "client",
    "bad-identity": "client",
    "lock-timeout": "client",
    "connection-lost": "server",
    "client-closed": "client",
    "internal": "server",
}

#: ``ERROR 0x0N`` of the session protocol -> the shared name.
SESSION_CODES: Dict[int, str] = {
    0x01: "server-going-away",
    0x02: "protocol-error",
    0x03: "lease-expired",
    0x04: "force-released",
    0x05: "kicked",
    0x06: "too-many-connections",
    0x07: "tokens-exhausted",
    0x08: "storage-unavailable",
    0x09: "claim-unknown",
}


class BatonError(Exception):
    """A failure with one of Baton's shared error names in ``.code``."""

    def __init__(self, code: str, detail: str = "") -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {detail}" if detail else code)

    @property
    def server_side(self) -> bool:
        """True when the condition is the server's: reconnect (or go elsewhere) and retry."""
        return ERROR_SIDES.get(self.code) == "server"


class LockTimeout(BatonError):
    """The wait ran out: nothing is held, nothing leaked."""

    def __init__(self, name: str, wait: Optional[float]) -> None:
        self.name = name
        self.wait = wait
        super().__init__("lock-timeout", f"lock {name!r} not acquired within {wait} s")


class LockLost(BatonError):
    """Ownership ended or can no longer be confirmed: stop touching the resource.

    ``.code`` says why (``force-released``, ``lease-expired``, ``server-going-away``,
    ``connection-lost``, ...).
    """


def error_from_wire_name(name: str, text: str) -> BatonError:
    """An ``E <op> <key> <name> <text>`` of the keyed protocol."""
    if name in ERROR_SIDES:
        return BatonError(name, text)
    # A newer server may send a name this client does not know: keep its words.
    return BatonError("protocol-error", f"{name} {text}".strip())


def error_from_session_code(code: int, text: str) -> BatonError:
    """An ``ERROR <code> <text>`` of the session protocol."""
    name = SESSION_CODES.get(code)
    if name is None:
        return BatonError("protocol-error", f"unknown error code {code}: {text}")
    return BatonError(name, text)
