"""Baton's asyncio clients: ``from baton_client.aio import KeyedClient, SessionClient``."""

from __future__ import annotations

from .keyed import AsyncGrant, KeyedClient
from .session import Claim, SessionClient

__all__ = ["AsyncGrant", "Claim", "KeyedClient", "SessionClient"]
