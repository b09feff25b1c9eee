"""Durations: the API speaks seconds (int or float, as the standard library's timeouts do); the
keyed wire speaks decimal seconds (at most 12 integer and 9 fraction digits) and the session
wire whole milliseconds. Ported from lib/protocol/duration-text.ts: converting exactly here
(no float noise like ``0.30000000000000004``) keeps the difference out of the clients, and bad
values are refused before they reach a socket.

A wait of None, 0 or ``math.inf`` means "wait forever", as ``0`` does on the wire and in the
TypeScript and Go clients; a try-lock is ``try_acquire``, which sends a 1 ms wait.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from numbers import Real
from typing import Dict, Optional, Tuple

from .errors import BatonError

#: The smallest positive amount the keyed wire text carries here (the TS client's too).
SMALLEST_WIRE_SECONDS = "0.000001"
_MICRO = Decimal("0.000001")
#: The server reads at most 12 integer digits of seconds.
_MAX_WIRE_SECONDS = Decimal(10) ** 12
#: The session wire's lease_ms is at most 15 digits.
_MAX_SESSION_MS = 10**15 - 1

#: The wire text of a try-lock's wait: 1 ms (the protocol's 0 means forever).
TRY_WAIT_WIRE = "0.001"


def _exact(seconds: object, code: str, what: str) -> Decimal:
    """``seconds`` as an exact Decimal: ints as they are, floats by their shortest repr (what the
    caller typed), refusing bools, NaN, infinities and anything not a real number."""
    if isinstance(seconds, bool) or not isinstance(seconds, (Real, Decimal)):
        raise BatonError(code, f"bad {what}: {seconds!r}; a number of seconds")
    try:
        if isinstance(seconds, int):
            value = Decimal(seconds)
        elif isinstance(seconds, Decimal):
            value = seconds
        else:
            value = Decimal(repr(float(seconds)))  # type: ignore[arg-type]
    except (InvalidOperation, ValueError, OverflowError):
        raise BatonError(code, f"bad {what}: {seconds!r}; a number of seconds") from None
    if not value.is_finite():
        raise BatonError(code, f"bad {what}: {seconds!r}; a finite number of seconds")
    return value


def _to_wire(value: Decimal, code: str, what: str) -> str:
    """A positive Decimal of seconds as the keyed wire's text; never rounds a positive to "0"."""
    if value >= _MAX_WIRE_SECONDS:
        raise BatonError(code, f"bad {what}: {value} s; at most 12 digits of seconds")
    if value == value.to_integral_value():
        return str(int(value))
    text = format(value.quantize(_MICRO, rounding=ROUND_HALF_UP), "f").rstrip("0").rstrip(".")
    return SMALLEST_WIRE_SECONDS if text in ("0", "") else text


#: Lease texts already worked out, by (type, value): a program passes the same few leases over
#: and over, and the exact Decimal conversion costs more than the rest of building a request.
#: Only ints and floats (the type is in the key, so True never finds 1's text); bounded.
_LEASE_TEXTS: Dict[Tuple[type, object], str] = {}
_LEASE_TEXTS_MAX = 256


def lease_to_wire(seconds: object) -> str:
    """Keyed lease: seconds > 0 -> decimal seconds, e.g. 0.25 -> "0.25", 30 -> "30"."""
    kind = type(seconds)
    if kind is int or kind is float:
        known = _LEASE_TEXTS.get((kind, seconds))
        if known is not None:
            return known
    value = _exact(seconds, "bad-lease", "lease")
    if value <= 0:
        raise BatonError("bad-lease", f"bad lease: {seconds!r}; seconds > 0")
    text = _to_wire(value, "bad-lease", "lease")
    if kind is int or kind is float:
        if len(_LEASE_TEXTS) >= _LEASE_TEXTS_MAX:
            _LEASE_TEXTS.clear()
        _LEASE_TEXTS[(kind, seconds)] = text
    return text


def is_forever(wait: object) -> bool:
    """None, 0 and infinity wait forever."""
    if wait is None:
        return True
    if isinstance(wait, bool):
        return False
    if isinstance(wait, (int, float)) and (wait == 0 or wait == math.inf):
        return True
    return isinstance(wait, Decimal) and (wait == 0 or wait == Decimal("Infinity"))


def wait_to_wire(seconds: object) -> str:
    """Keyed wait: None, 0 or inf -> "0" (forever); seconds > 0 -> decimal seconds."""
    if is_forever(seconds):
        return "0"
    value = _exact(seconds, "bad-wait", "wait")
    if value < 0:
        raise BatonError("bad-wait", f"bad wait: {seconds!r}; seconds >= 0")
    return _to_wire(value, "bad-wait", "wait")


def wait_seconds(seconds: object) -> Optional[float]:
    """The wait as a float for the client's own clocks; None for forever. Validates as
    ``wait_to_wire`` does."""
    wait_to_wire(seconds)
    return None if is_forever(seconds) else float(seconds)  # type: ignore[arg-type]


def session_lease_ms(seconds: object) -> int:
    """Session lease: seconds > 0 -> whole milliseconds, rounded half up, never 0."""
    value = _exact(seconds, "bad-lease", "lease")
    if value <= 0:
        raise BatonError("bad-lease", f"bad lease: {seconds!r}; seconds > 0")
    ms = int((value * 1000).to_integral_value(rounding=ROUND_HALF_UP))
    ms = max(ms, 1)
    if ms > _MAX_SESSION_MS:
        raise BatonError("bad-lease", f"bad lease: {seconds!r}; at most 15 digits of milliseconds")
    return ms


def seconds_to_ms(seconds: object, code: str = "bad-lease", what: str = "duration") -> int:
    """Any duration >= 0 as whole milliseconds (rounded half up; a positive one at least 1)."""
    value = _exact(seconds, code, what)
    if value < 0:
        raise BatonError(code, f"bad {what}: {seconds!r}; seconds >= 0")
    ms = int((value * 1000).to_integral_value(rounding=ROUND_HALF_UP))
    return 1 if ms == 0 and value > 0 else ms
