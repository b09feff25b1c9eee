"""The asyncio keyed client against a real single-node ``baton serve``."""

from __future__ import annotations

import asyncio

import pytest

from baton_client import BatonError, LockTimeout
from baton_client.aio import AsyncGrant, KeyedClient
from conftest import BatonProcess, wait_for


def run(coro, timeout: float = 60):
    """Runs one test coroutine with an overall bound, so a hang fails instead of stalling."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_acquire_release_and_async_with(baton_server: BatonProcess) -> None:
    async def main() -> None:
        async with KeyedClient(baton_server.lock_address) as client:
            grant = await client.acquire("aio/grant", lease=30)
            assert isinstance(grant, AsyncGrant) and grant.token > 0
            assert await grant.release() is True
            async with client.lock("aio/with", lease=30, wait=5) as held:
                assert baton_server.holder("aio/with")["token"] == str(held.token)
            assert baton_server.holder("aio/with") is None
            assert await client.try_acquire("aio/try", lease=30) is not None
            assert await client.try_acquire("aio/try", lease=30) is None
            with pytest.raises(LockTimeout):
                await client.acquire("aio/try", lease=30, wait=0.2)
            with pytest.raises(BatonError) as info:
                await client.acquire("bad key", lease=30)
            assert info.value.code == "bad-key"

    run(main())


def test_many_concurrent_acquires_pipeline_on_one_loop(baton_server: BatonProcess) -> None:
    async def main() -> None:
        async with KeyedClient(baton_server.lock_address) as client:

            async def one(i: int) -> int:
                async with client.lock(f"aio/many-{i % 10}", lease=30, wait=30) as grant:
                    await asyncio.sleep(0)
                    return grant.token

            tokens = await asyncio.gather(*(one(i) for i in range(200)))
            assert len(set(tokens)) == 200

    run(main())


def test_a_cancelled_acquire_never_strands_the_lock(baton_server: BatonProcess) -> None:
    async def main() -> None:
        async with KeyedClient(baton_server.lock_address) as holder, KeyedClient(baton_server.lock_address) as waiter:
            held = await holder.acquire("aio/cancel", lease=30)
            task = asyncio.ensure_future(waiter.acquire("aio/cancel", lease=30))
            # Queued on the server behind the holder.
            await asyncio.get_running_loop().run_in_executor(
                None,
                lambda: wait_for(
                    lambda: len(baton_server.api("/api/v1/locks/aio%2Fcancel")[1].get("queue", [])) == 1, 10, "the waiter queued"
                ),
            )
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The holder lets go: the cancelled request is granted next, and released at once.
            assert await held.release() is True
            again = await holder.acquire("aio/cancel", lease=30, wait=10)
            assert again.token > held.token + 1  # the cancelled one got (and gave back) the token between
            assert await again.release() is True

    run(main())


def test_cancelling_the_body_of_async_with_releases(baton_server: BatonProcess) -> None:
    async def main() -> None:
        async with KeyedClient(baton_server.lock_address) as client:
            entered = asyncio.Event()

            async def body() -> None:
                async with client.lock("aio/cancel-body", lease=30):
                    entered.set()
                    await asyncio.sleep(60)

            task = asyncio.ensure_future(body())
            await entered.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert baton_server.holder("aio/cancel-body") is None

    run(main())
