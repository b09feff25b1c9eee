"""Server addresses: ``"host:port"``, ``"[v6]:port"``, a bare host (the protocol's default
port), or a ``(host, port)`` tuple. Ported from lib/protocol/address-text.ts."""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple, Union

Address = Tuple[str, int]
AddressInput = Union[str, Tuple[str, int]]

DEFAULT_KEYED_PORT = 7070
DEFAULT_SESSION_PORT = 7071


def _port(text: str) -> Optional[int]:
    if not text or len(text) > 5 or not text.isascii() or not text.isdigit():
        return None
    port = int(text)
    return port if 1 <= port <= 65535 else None


def parse_address(text: str, default_port: Optional[int] = None) -> Optional[Address]:
    """``(host, port)`` of ``text``; None when it is not an address (the default port stands in
    for a missing one when given)."""
    port_text: Optional[str] = None
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            return None
        host = text[1:close]
        rest = text[close + 1 :]
        if rest:
            if not rest.startswith(":"):
                return None
            port_text = rest[1:]
    else:
        colon = text.rfind(":")
        # More than one colon without brackets is a bare IPv6 address, not host:port.
        if colon >= 0 and text.find(":") == colon:
            host, port_text = text[:colon], text[colon + 1 :]
        else:
            host = text
    # A host with whitespace in it is no host name a resolver takes, whatever sent it.
    if not host or any(c.isspace() for c in host):
        return None
    if port_text is None:
        return None if default_port is None else (host, default_port)
    port = _port(port_text)
    return None if port is None else (host, port)


def format_address(address: Address) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def normalize_addresses(addresses: Union[AddressInput, Iterable[AddressInput], None], default_port: int) -> List[Address]:
    """The addresses as ``(host, port)`` pairs, in order; ValueError for a bad one or none."""
    if addresses is None:
        return [("127.0.0.1", default_port)]
    if isinstance(addresses, str) or (
        isinstance(addresses, tuple) and len(addresses) == 2 and isinstance(addresses[1], int)
    ):
        addresses = [addresses]  # type: ignore[list-item]
    result: List[Address] = []
    for item in addresses:  # type: ignore[union-attr]
        if isinstance(item, str):
            parsed = parse_address(item, default_port)
        elif isinstance(item, Sequence) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], int):
            parsed = (item[0], item[1]) if item[0] and 1 <= item[1] <= 65535 else None
        else:
            parsed = None
        if parsed is None:
            raise ValueError(f"not a server address: {item!r} (host:port)")
        result.append(parsed)
    if not result:
        raise ValueError("no server addresses given")
    return result
