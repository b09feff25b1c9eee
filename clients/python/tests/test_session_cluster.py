"""The threaded session client against a real three-node cluster: a crash of the active (kill -9)
loses a seed claim and keeps a resumable one; a planned handoff moves a resumable claim
(``MOVED``) with its token, its ``lost`` never set."""

from __future__ import annotations

import time
from typing import Any, Optional

from baton_client.session import Claim, SessionClient


def _active(cluster: Any) -> Optional[str]:
    for node_id, node in cluster.nodes.items():
        if not node.running:
            continue
        try:
            if cluster.view(node_id).get("phase") == "active":
                return node_id
        except Exception:  # noqa: BLE001 - a node still electing
            continue
    return None


def _wait_resumed(cluster: Any, claim: Claim, timeout: float = 15.0) -> str:
    """Until a live active node shows the claim's token holding its lock, not reconnecting, and
    the client has its claim on a connection again; returns that node's id."""
    deadline = time.monotonic() + timeout
    while True:
        assert not claim.lost.is_set(), f"lost: {claim.reason}"
        node_id = _active(cluster)
        if node_id is not None:
            holder = cluster.node(node_id).holder(claim.name)
            machine = claim._runner.machine  # noqa: SLF001 - whether the RESUME was answered
            if holder and int(holder["token"]) == claim.token and not holder.get("reconnecting") and not machine.resuming:
                return node_id
        assert time.monotonic() < deadline, f"never resumed; active={node_id}\n{cluster.logs()}"
        time.sleep(0.05)


def test_kill_9_of_the_active_loses_a_seed_claim_and_a_resumable_one_keeps_its_token(baton_cluster) -> None:  # type: ignore[no-untyped-def]
    addresses = baton_cluster.session_addresses()
    seed = SessionClient(addresses, identity="pys seed")
    resumable = SessionClient(addresses, identity="pys resumable", resumable=True)
    try:
        seed_claim = seed.acquire("pys/crash-seed", lease=10)
        kept = resumable.acquire("pys/crash-kept", lease=10)
        baton_cluster.wait_replicated("pys/crash-kept", kept.token, ("b", "c"))
        baton_cluster.wait_replicated("pys/crash-seed", seed_claim.token, ("b", "c"))
        token = kept.token
        baton_cluster.kill9("a")
        assert seed_claim.lost.wait(5), "the seed claim did not notice its node died"
        assert seed_claim.reason is not None and seed_claim.reason.code == "connection-lost"
        node_id = _wait_resumed(baton_cluster, kept)
        assert node_id in ("b", "c")
        assert kept.token == token and not kept.lost.is_set()
        time.sleep(1.0)  # heartbeats on the new active keep it
        assert not kept.lost.is_set(), kept.reason
        kept.check()
    finally:
        seed.close()
        resumable.close()


def test_a_planned_handoff_moves_a_resumable_claim_with_its_token(baton_cluster) -> None:  # type: ignore[no-untyped-def]
    addresses = baton_cluster.session_addresses()
    seed = SessionClient(addresses, identity="pys seed")
    resumable = SessionClient(addresses, identity="pys resumable", resumable=True)
    try:
        seed_claim = seed.acquire("pys/handoff-seed", lease=10)
        kept = resumable.acquire("pys/handoff-kept", lease=10)
        baton_cluster.wait_replicated("pys/handoff-kept", kept.token, ("b", "c"))
        token = kept.token
        generation = kept._runner.machine.generation  # noqa: SLF001
        baton_cluster.sigterm("a")  # a graceful stop of the active hands its role off first
        # The seed claim ended at the handoff (REDIRECT or 0x01: the work must stop).
        assert seed_claim.lost.wait(5)
        assert seed_claim.reason is not None and seed_claim.reason.code in ("server-going-away", "connection-lost")
        node_id = _wait_resumed(baton_cluster, kept)
        assert node_id in ("b", "c")
        assert kept._runner.machine.generation > generation  # noqa: SLF001 - on a new connection
        assert kept.token == token
        time.sleep(1.0)
        assert not kept.lost.is_set(), kept.reason
    finally:
        seed.close()
        resumable.close()


def test_a_handoff_through_the_ops_api_moves_the_claim_and_a_new_holder_waits(baton_cluster) -> None:  # type: ignore[no-untyped-def]
    addresses = baton_cluster.session_addresses()
    holder = SessionClient(addresses, resumable=True)
    try:
        kept = holder.acquire("pys/api-handoff", lease=10)
        baton_cluster.wait_replicated("pys/api-handoff", kept.token, ("b", "c"))
        status, body = baton_cluster.node("a").api("/api/v1/cluster/handoff", "POST", {"target": "b"})
        assert status in (200, 202), body
        node_id = _wait_resumed(baton_cluster, kept)
        assert node_id == "b"
        other = SessionClient(addresses, identity=None)
        try:
            # The lock is still ours on the new active: another client waits and times out.
            try:
                other.acquire("pys/api-handoff", lease=5, wait=0.5)
                raise AssertionError("a second client got a lock that moved with its holder")
            except Exception as error:  # noqa: BLE001
                assert getattr(error, "code", None) == "lock-timeout", error
        finally:
            other.close()
        assert not kept.lost.is_set(), kept.reason
    finally:
        holder.close()


def test_asyncio_resumable_claim_survives_kill_9_of_the_active(baton_cluster) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from baton_client.aio.session import SessionClient as AsyncSessionClient

    async def main() -> None:
        client = AsyncSessionClient(baton_cluster.session_addresses(), resumable=True)
        try:
            claim = await client.acquire("pys/aio-crash", lease=10)
            token = claim.token
            loop = asyncio.get_event_loop()
            await loop.run_in_executor(None, baton_cluster.wait_replicated, "pys/aio-crash", token, ("b", "c"))
            await loop.run_in_executor(None, baton_cluster.kill9, "a")

            def resumed() -> bool:
                node_id = _active(baton_cluster)
                if node_id is None:
                    return False
                holder = baton_cluster.node(node_id).holder("pys/aio-crash")
                return bool(holder) and int(holder["token"]) == token and not holder.get("reconnecting")

            deadline = time.monotonic() + 15
            while not (await loop.run_in_executor(None, resumed) and not claim._runner.machine.resuming):  # noqa: SLF001
                assert not claim.lost.is_set(), claim.reason
                assert time.monotonic() < deadline, "never resumed"
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)
            assert not claim.lost.is_set(), claim.reason
            assert claim.token == token
        finally:
            await client.close()

    asyncio.run(main())
