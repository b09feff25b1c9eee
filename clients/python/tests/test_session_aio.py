"""The asyncio session client against a real ``baton serve``: the same protocol machine as the
threaded client, driven from the event loop, and cancellation that never strands a claim."""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from typing import Any, List

import pytest

from baton_client.aio.session import SessionClient
from baton_client.errors import BatonError, LockLost, LockTimeout

SLACK = 2.0


def _queue_length(node: Any, name: str) -> int:
    status, body = node.api(f"/api/v1/locks/{urllib.parse.quote(name, safe='')}")
    return 0 if status == 404 else int(body["queueLength"])


async def _until(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


def test_async_with_hold_pushes_the_grant_to_the_next_waiter(baton_server) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        first = SessionClient([baton_server.session_address])
        second = SessionClient([baton_server.session_address], identity=None)
        try:
            async with first.hold("pys/aio", lease=5) as claim:
                assert isinstance(claim.lost, asyncio.Event) and not claim.lost.is_set()
                waiter = asyncio.ensure_future(second.acquire("pys/aio", lease=5))
                await _until(lambda: _queue_length(baton_server, "pys/aio") == 1, 10, "never queued")
                await asyncio.sleep(0.6)  # heartbeats while queued
                assert not waiter.done()
            assert claim.lost.is_set() and claim.reason is not None and claim.reason.code == "client-closed"
            next_claim = await asyncio.wait_for(waiter, 5)
            assert next_claim.token > claim.token
            await next_claim.release()
        finally:
            await first.close()
            await second.close()

    asyncio.run(main())


def test_cancelling_a_waiting_hold_never_strands_a_claim(baton_server) -> None:  # type: ignore[no-untyped-def]
    name = "pys/aio-cancel"

    async def main() -> None:
        holder = SessionClient([baton_server.session_address])
        waiter = SessionClient([baton_server.session_address], resumable=True)
        ran: List[bool] = []
        try:
            claim = await holder.acquire(name, lease=5)

            async def body() -> None:
                async with waiter.hold(name, lease=5):
                    ran.append(True)

            task = asyncio.ensure_future(body())
            await _until(lambda: _queue_length(baton_server, name) == 1, 10, "never queued")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await _until(lambda: _queue_length(baton_server, name) == 0, 5, "the cancelled waiter stayed queued")
            await claim.release()
            await asyncio.sleep(0.3)
            assert baton_server.holder(name) is None, "a cancelled hold got the lock"
            assert ran == []
        finally:
            await holder.close()
            await waiter.close()

    asyncio.run(main())


def test_cancelling_right_as_the_grant_arrives_releases_it(baton_server) -> None:  # type: ignore[no-untyped-def]
    """Cancel at many points around the grant: whichever side wins, nothing stays held."""
    name = "pys/aio-race"

    async def main() -> None:
        client = SessionClient([baton_server.session_address])
        try:
            for delay in (0.0, 0.0005, 0.001, 0.002, 0.004, 0.008):
                task = asyncio.ensure_future(client.acquire(name, lease=5))
                await asyncio.sleep(delay)
                task.cancel()
                try:
                    claim = await task
                    await claim.release()
                except asyncio.CancelledError:
                    pass
            await _until(lambda: baton_server.holder(name) is None, 5, "a cancelled acquire stranded the lock")
        finally:
            await client.close()

    asyncio.run(main())


def test_wait_runs_out_with_lock_timeout_and_nothing_queued(baton_server) -> None:  # type: ignore[no-untyped-def]
    name = "pys/aio-timeout"

    async def main() -> None:
        holder = SessionClient([baton_server.session_address])
        waiter = SessionClient([baton_server.session_address])
        try:
            async with holder.hold(name, lease=5):
                with pytest.raises(LockTimeout):
                    async with waiter.hold(name, lease=5, wait=0.3):
                        pytest.fail("the body ran without the lock")
                await _until(lambda: _queue_length(baton_server, name) == 0, 5, "the timed-out waiter stayed queued")
        finally:
            await holder.close()
            await waiter.close()

    asyncio.run(main())


def test_a_force_release_sets_the_async_lost_event(baton_server) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        client = SessionClient([baton_server.session_address])
        try:
            async with client.hold("pys/aio-force", lease=8) as claim:
                interval = claim.heartbeat_interval  # 2 s
                # The API call blocks the loop; the ERROR line waits in the socket meanwhile.
                status, _ = baton_server.api("/api/v1/locks/pys%2Faio-force/force-release", "POST", {})
                assert status == 200
                await asyncio.wait_for(claim.lost.wait(), interval)
                assert claim.reason is not None and claim.reason.code == "force-released"
                with pytest.raises(LockLost):
                    claim.check()
        finally:
            await client.close()

    asyncio.run(main())


def test_shutdown_sets_lost_with_server_going_away(start_baton) -> None:  # type: ignore[no-untyped-def]
    node = start_baton("--token-floor", "9007199254740993")

    async def main() -> None:
        client = SessionClient([node.session_address], reconnect_for=0.5)
        try:
            claim = await client.acquire("pys/aio-shutdown", lease=10)
            assert claim.token == 9007199254740994
            await asyncio.get_event_loop().run_in_executor(None, node.sigterm)
            await asyncio.wait_for(claim.lost.wait(), 5)
            assert claim.reason is not None and claim.reason.code == "server-going-away"
            with pytest.raises(BatonError):
                await client.acquire("pys/aio-shutdown", lease=10)  # nobody there any more
        finally:
            await client.close()

    asyncio.run(main())


def test_async_half_line_then_silence_and_a_10_mb_line_end_clearly() -> None:
    from test_session_broken import LineIn, ScriptedServer

    def half_line(index: int, sock: Any, lines: LineIn) -> None:
        lines.line()
        sock.sendall(b"ACQUIRED 5\n")
        assert lines.line() == "HEARTBEAT"
        sock.sendall(b"ACQ")
        time.sleep(30)

    def huge(index: int, sock: Any, lines: LineIn) -> None:
        lines.line()
        try:
            sock.sendall(b"y" * (10 * 1024 * 1024))
        except OSError:
            pass
        time.sleep(30)

    silent, flood = ScriptedServer(half_line), ScriptedServer(huge)

    async def main() -> None:
        client = SessionClient([silent.address], identity=None)
        try:
            claim = await client.acquire("x", lease=1)
            await asyncio.wait_for(claim.lost.wait(), 0.8 + SLACK)
            assert claim.reason is not None and claim.reason.code == "lease-expired"
        finally:
            await client.close()
        client = SessionClient([flood.address], identity=None)
        try:
            with pytest.raises(BatonError) as caught:
                await asyncio.wait_for(client.acquire("x", lease=10), SLACK)
            assert caught.value.code == "protocol-error"
        finally:
            await client.close()

    try:
        asyncio.run(main())
    finally:
        silent.close()
        flood.close()


def test_releasing_a_resumable_async_claim_parks_nothing(baton_server) -> None:  # type: ignore[no-untyped-def]
    name = "pys/aio-resumable-release"

    async def main() -> None:
        client = SessionClient([baton_server.session_address], resumable=True)
        try:
            async with client.hold(name, lease=30) as claim:
                await asyncio.sleep(0.2)
                assert int(baton_server.holder(name)["token"]) == claim.token
            await _until(lambda: baton_server.holder(name) is None, 3, "a released resumable claim stayed parked")
        finally:
            await client.close()

    asyncio.run(main())
