"""Baton's official Python client (standard library only)."""

from __future__ import annotations

from ._identity import DEFAULT_IDENTITY, default_identity, is_valid_identity
from ._keys import is_valid_key
from .errors import BatonError, LockLost, LockTimeout
from .keyed import Grant, KeyedClient
from .session import Claim, SessionClient

__all__ = [
    "DEFAULT_IDENTITY",
    "BatonError",
    "Claim",
    "Grant",
    "KeyedClient",
    "LockLost",
    "LockTimeout",
    "SessionClient",
    "default_identity",
    "is_valid_identity",
    "is_valid_key",
]
