"""The keyed client against a real three-node cluster: failover and redirects."""

from __future__ import annotations

import threading
import time

from baton_client import KeyedClient
from conftest import BatonCluster, wait_for


def lock_address_of(cluster: BatonCluster, node_id: str):
    host, _, port = cluster.node(node_id).lock_address.rpartition(":")
    return (host, int(port))


def test_kill9_of_the_active_a_held_grant_is_released_on_the_new_active_with_its_token(baton_cluster: BatonCluster) -> None:
    with KeyedClient(baton_cluster.lock_addresses(), identity="pytest cluster", reconnect_interval=0.25) as client:
        grant = client.acquire("cluster/held", lease=60)
        baton_cluster.wait_replicated("cluster/held", grant.token, ("b", "c"))
        baton_cluster.kill9("a")
        baton_cluster.wait_active("b")
        assert baton_cluster.node("b").holder("cluster/held")["token"] == str(grant.token)
        started = time.monotonic()
        assert grant.release() is True  # on b: the same token, not STALE
        assert time.monotonic() - started < 10
        assert baton_cluster.node("b").holder("cluster/held") is None
        # And the client goes on taking locks from the new active, with larger tokens.
        after = client.acquire("cluster/after", lease=60, wait=10)
        assert after.token > grant.token
        assert baton_cluster.node("b").holder("cluster/after")["token"] == str(after.token)
        assert after.release() is True


def test_an_acquire_in_flight_across_kill9_is_granted_by_the_new_active(baton_cluster: BatonCluster) -> None:
    with KeyedClient(baton_cluster.lock_addresses(), reconnect_interval=0.25) as holder, KeyedClient(
        baton_cluster.lock_addresses(), reconnect_interval=0.25
    ) as waiter:
        held = holder.acquire("cluster/queued", lease=3)
        baton_cluster.wait_replicated("cluster/queued", held.token, ("b", "c"))
        box = []
        thread = threading.Thread(target=lambda: box.append(waiter.acquire("cluster/queued", lease=30, wait=20)), daemon=True)
        thread.start()
        time.sleep(0.3)
        baton_cluster.kill9("a")
        # The waiter's request moves to b, which grants it once the held lease (3 s) runs out.
        thread.join(30)
        assert box, "the waiting acquire never settled"
        assert box[0].token > held.token
        assert box[0].release() is True


def test_given_only_a_standbys_address_the_client_follows_m_to_the_active(baton_cluster: BatonCluster) -> None:
    with KeyedClient(baton_cluster.lock_addresses("c"), reconnect_interval=0.25) as client:
        grant = client.acquire("cluster/redirected", lease=60, wait=10)
        assert baton_cluster.node("a").holder("cluster/redirected")["token"] == str(grant.token)
        assert grant.release() is True
        assert baton_cluster.node("a").holder("cluster/redirected") is None
        wait_for(lambda: all(c.address == lock_address_of(baton_cluster, "a") for c in client._engine.connections), 10, "both connections on a")


def test_sigterm_handoff_keeps_a_held_grant_releasable(baton_cluster: BatonCluster) -> None:
    with KeyedClient(baton_cluster.lock_addresses(), reconnect_interval=0.25) as client:
        grant = client.acquire("cluster/handoff", lease=60)
        baton_cluster.wait_replicated("cluster/handoff", grant.token, ("b", "c"))
        assert baton_cluster.sigterm("a") == 0
        baton_cluster.wait_active("b")
        assert grant.release() is True
        assert baton_cluster.node("b").holder("cluster/handoff") is None
