"""Baton's asyncio clients: ``from baton_client.aio import KeyedClient``."""

from __future__ import annotations

from .keyed import AsyncGrant, KeyedClient

__all__ = ["AsyncGrant", "KeyedClient"]
