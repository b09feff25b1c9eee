"""The rule for keys (lock names), ported from lib/protocol/key-rules.ts and the server's
``parseKey`` (lib/protocol/wire-fields.ts).

A name the server refuses is answered with a mangled key that no client can match to its
request, so every name is checked with the server's rule before it is sent.
"""

from __future__ import annotations

import re

from ._charclass import is_control_or_format, is_js_whitespace, utf8_or_none
from .errors import BatonError

MAX_KEY_BYTES = 250
#: An ASCII space or control byte, searched in C: a loop over the bytes in Python was a visible
#: share of the cost of every request.
_SPACE_OR_CONTROL_BYTE = re.compile(rb"[\x00-\x20\x7f]")


def is_valid_key(name: object) -> bool:
    """True when the server takes ``name`` as a key and holds it under that same name: 1-250
    bytes of well-formed UTF-8 without whitespace (including NBSP and U+2028), control or
    format characters (including U+FEFF)."""
    if not isinstance(name, str) or not name or len(name) > MAX_KEY_BYTES:
        return False
    data = utf8_or_none(name)
    if data is None or len(data) > MAX_KEY_BYTES:
        return False
    if _SPACE_OR_CONTROL_BYTE.search(data) is not None:
        return False
    if data.isascii():
        return True
    return not any(is_js_whitespace(ch) or is_control_or_format(ch) for ch in name)


def require_valid_key(name: object) -> str:
    """``name`` when valid; else raises BatonError ``bad-key`` before anything is sent."""
    if not is_valid_key(name):
        raise BatonError(
            "bad-key",
            f"bad lock name {name!r}: 1-250 bytes of UTF-8 without whitespace or control characters",
        )
    return name  # type: ignore[return-value]
