"""Client identities (keyed ``I <identity>``, session ``CLIENT <identity>``), ported from
lib/protocol/client-name.ts and lib/client/default-client-name.ts.

The default is ``<user>@<host> pid <pid>``, so an operator can tell a stuck worker from its port
alone. ``identity=DEFAULT_IDENTITY`` (what an omitted argument means) sends that; a string sends
that string (checked: a bad one raises BatonError ``bad-identity``); ``identity=None`` sends
nothing at all, the seed protocol's bytes.
"""

from __future__ import annotations

import getpass
import os
import socket
from typing import Optional, Union

from ._charclass import is_control_or_format, is_js_whitespace, utf8_or_none
from .errors import BatonError

MAX_IDENTITY_BYTES = 128


class _DefaultIdentity:
    """The sentinel for "send the default identity": None already means "send none"."""

    _instance: "Optional[_DefaultIdentity]" = None

    def __new__(cls) -> "_DefaultIdentity":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "DEFAULT_IDENTITY"

    def __reduce__(self) -> str:
        return "DEFAULT_IDENTITY"


#: Pass (or omit) this to send ``<user>@<host> pid <pid>``.
DEFAULT_IDENTITY = _DefaultIdentity()

IdentityOption = Union[str, None, _DefaultIdentity]


def _forbidden(ch: str) -> bool:
    """A character an identity may not hold: controls, format characters, separators, and any
    whitespace but the plain space (the name is shown on one line and must look as sent)."""
    return is_control_or_format(ch) or (ch != " " and is_js_whitespace(ch))


def is_valid_identity(name: object) -> bool:
    """True when the server takes ``name`` as an identity and shows that same string: 1-128
    bytes of well-formed UTF-8, spaces inside but not at either end, no other whitespace and no
    control, format, line or paragraph separator characters."""
    if not isinstance(name, str) or not name or len(name) > MAX_IDENTITY_BYTES:
        return False
    data = utf8_or_none(name)
    if data is None or len(data) > MAX_IDENTITY_BYTES:
        return False
    if data[0] == 0x20 or data[-1] == 0x20:
        return False
    ascii_only = True
    for b in data:
        if b < 0x20 or b == 0x7F:
            return False
        if b >= 0x80:
            ascii_only = False
    if ascii_only:
        return True
    return not any(_forbidden(ch) for ch in name)


def to_identity(text: str) -> Optional[str]:
    """A valid identity made of any text: forbidden characters (and lone surrogates) become
    ``?``, the ends are trimmed, and the result is cut to 128 bytes on a character boundary.
    None when nothing is left."""
    out = []
    size = 0
    for ch in _js_trim(text):
        safe = "?" if _forbidden(ch) or 0xD800 <= ord(ch) <= 0xDFFF else ch
        width = len(safe.encode("utf-8"))
        if size + width > MAX_IDENTITY_BYTES:
            break
        out.append(safe)
        size += width
    result = _js_trim("".join(out))
    return result or None


def _js_trim(text: str) -> str:
    """String.prototype.trim: strips JavaScript whitespace, which differs from str.strip()."""
    start, end = 0, len(text)
    while start < end and is_js_whitespace(text[start]):
        start += 1
    while end > start and is_js_whitespace(text[end - 1]):
        end -= 1
    return text[start:end]


def default_identity(prefix: str = "") -> Optional[str]:
    """``<user>@<host> pid <pid>``, made valid and cut to 128 bytes."""
    return to_identity(f"{prefix}{_user_name()}@{socket.gethostname()} pid {os.getpid()}")


def resolve_identity(option: IdentityOption = DEFAULT_IDENTITY) -> Optional[str]:
    """The identity to send: the default for ``DEFAULT_IDENTITY``, nothing for None, else the
    string itself once checked (a bad one raises BatonError ``bad-identity``)."""
    if option is DEFAULT_IDENTITY:
        return default_identity()
    if option is None:
        return None
    if not is_valid_identity(option):
        raise BatonError("bad-identity", repr(option))
    return option  # type: ignore[return-value]


def _user_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry and no USER/LOGNAME: a container
        getuid = getattr(os, "getuid", None)
        return f"uid {getuid()}" if getuid is not None else "uid ?"
