"""Baton's asyncio clients."""
