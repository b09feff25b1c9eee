"""Baton's official Python client (standard library only)."""

from __future__ import annotations

from ._identity import DEFAULT_IDENTITY, default_identity, is_valid_identity
from ._keys import is_valid_key
from .errors import BatonError, LockLost, LockTimeout

__all__ = [
    "DEFAULT_IDENTITY",
    "BatonError",
    "LockLost",
    "LockTimeout",
    "default_identity",
    "is_valid_identity",
    "is_valid_key",
]
