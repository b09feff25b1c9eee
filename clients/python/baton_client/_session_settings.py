"""What both session clients (threaded and asyncio) are given: the cluster's addresses and the
options, checked once, and the machine of each new claim made from them."""

from __future__ import annotations

import secrets
from typing import Optional, Sequence, Union

from ._heartbeat import DEFAULT_MIN_INTERVAL
from ._identity import DEFAULT_IDENTITY, IdentityOption, resolve_identity
from ._session_machine import DEFAULT_MAX_PARK, ClaimMachine
from ._address import DEFAULT_SESSION_PORT, AddressInput, normalize_addresses

#: How long to keep queueing anew while no server answers at all, in seconds.
DEFAULT_RECONNECT_FOR = 5.0
#: How long a connect may take, in seconds.
DEFAULT_CONNECT_TIMEOUT = 3.0

def new_claim_key() -> str:
    """128 random bits, hex: only this client knows it, so only it can take its claim up again
    (the fencing token is public and never enough)."""
    return secrets.token_hex(16)


class SessionClientSettings:
    """The options of a session client, as ``SessionClient`` documents them, checked (a bad one
    is a ``ValueError``). Both clients are these settings and more."""

    def __init__(
        self,
        addresses: Union[AddressInput, Sequence[AddressInput], None] = None,
        identity: IdentityOption = DEFAULT_IDENTITY,
        resumable: bool = False,
        max_park: float = DEFAULT_MAX_PARK,
        min_heartbeat_interval: float = DEFAULT_MIN_INTERVAL,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        reconnect_for: float = DEFAULT_RECONNECT_FOR,
    ) -> None:
        self.addresses = normalize_addresses(addresses, DEFAULT_SESSION_PORT)
        if not (isinstance(max_park, (int, float)) and max_park > 0 and max_park != float("inf")):
            raise ValueError(f"max_park must be a positive number of seconds, got {max_park!r}")
        self.identity = resolve_identity(identity)
        self.resumable = resumable
        self.max_park = float(max_park)
        self.min_heartbeat_interval = float(min_heartbeat_interval)
        self.connect_timeout = float(connect_timeout)
        self.reconnect_for = float(reconnect_for)

    def new_machine(self, name: str, lease_ms: int, give_up_after: Optional[float], now: float) -> ClaimMachine:
        """The machine of one attempt at a claim; a resumable one gets a claim key of its own."""
        return ClaimMachine(
            name,
            lease_ms,
            now=now,
            min_interval=self.min_heartbeat_interval,
            give_up_after=give_up_after,
            identity=self.identity,
            claim_key=new_claim_key() if self.resumable else None,
            resume_addresses=self.addresses,
            max_park=self.max_park,
        )
