"""Acquire+release pairs/s through one Python client process, for `npm run bench:clients`.

Usage: python3 python_pairs.py <baton|baton-aio|redis-py> <host:port> <seconds> <in-flight>
Prints one JSON line: {"pairs": N, "seconds": S}. `in-flight` threads share one client (one
KeyedClient, or one redis-py connection pool), each taking and releasing its own key in a loop;
for `baton-aio`, `in-flight` asyncio tasks share one baton_client.aio.KeyedClient.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

LEASE_S = 30


def baton_worker(address: str):
    from baton_client import KeyedClient

    client = KeyedClient([address], identity=None)

    def pair(key: str) -> None:
        grant = client.acquire(key, lease=LEASE_S)
        grant.release()

    return pair, client.close


def redis_worker(address: str):
    import redis

    host, port = address.rsplit(":", 1)
    r = redis.Redis(host=host, port=int(port))

    def pair(key: str) -> None:
        lock = r.lock(key, timeout=LEASE_S)
        if not lock.acquire(blocking=True):
            raise RuntimeError("redis-py lock not acquired")
        lock.release()

    return pair, r.close


async def run_aio(address: str, seconds: float, in_flight: int) -> dict:
    import asyncio

    from baton_client.aio import KeyedClient

    async with KeyedClient([address], identity=None) as client:

        async def pair(key: str) -> None:
            grant = await client.acquire(key, lease=LEASE_S)
            await grant.release()

        keys = [f"bench/py-aio/{os.getpid()}/{i}" for i in range(in_flight)]
        await asyncio.gather(*(pair(k) for k in keys))
        counts = [0] * in_flight
        stop = False

        async def loop(i: int) -> None:
            while not stop:
                await pair(keys[i])
                counts[i] += 1

        began = time.monotonic()
        tasks = [asyncio.ensure_future(loop(i)) for i in range(in_flight)]
        await asyncio.sleep(seconds)
        stop = True
        await asyncio.gather(*tasks)
        return {"pairs": sum(counts), "seconds": time.monotonic() - began}


def main() -> None:
    kind, address, seconds, in_flight = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    if kind == "baton-aio":
        import asyncio

        print(json.dumps(asyncio.run(run_aio(address, seconds, in_flight))))
        return
    pair, close = (baton_worker if kind == "baton" else redis_worker)(address)
    counts = [0] * in_flight
    stop = threading.Event()
    errors: list = []

    def loop(i: int) -> None:
        key = f"bench/py/{os.getpid()}/{i}"
        try:
            while not stop.is_set():
                pair(key)
                counts[i] += 1
        except Exception as e:  # reported, and the run counts as failed
            errors.append(repr(e))
            stop.set()

    # One warm-up pair per thread before the clock starts (connects, first grants).
    for i in range(in_flight):
        pair(f"bench/py/{os.getpid()}/{i}")
    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(in_flight)]
    began = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(10)
    elapsed = time.monotonic() - began
    close()
    if errors:
        print(json.dumps({"error": errors[0]}))
        sys.exit(1)
    print(json.dumps({"pairs": sum(counts), "seconds": elapsed}))


if __name__ == "__main__":
    main()
