"""The session protocol's reply parser and line reader: every server line a client can read, and
a clear ``protocol-error`` for everything else, random and hostile bytes included."""

from __future__ import annotations

import random

import pytest

from baton_client._session_wire import (
    MAX_LINE_BYTES,
    U64_MAX,
    Acquired,
    LineReader,
    Moved,
    Redirect,
    ServerError,
    Waiting,
    encode_acquire,
    encode_client,
    encode_resume,
    parse_address,
    parse_reply,
)
from baton_client.errors import BatonError
from baton_client._session_machine import ClaimMachine


def test_reads_acquired_with_an_exact_u64_token() -> None:
    assert parse_reply("ACQUIRED 7") == Acquired(7)
    assert parse_reply("ACQUIRED 9007199254740993") == Acquired(9007199254740993)
    assert parse_reply(f"ACQUIRED {U64_MAX}") == Acquired(2**64 - 1)
    assert parse_reply("ACQUIRED 007") == Acquired(7)


def test_reads_waiting_error_redirect_and_moved() -> None:
    assert parse_reply("WAITING 3") == Waiting(3)
    reply = parse_reply("ERROR 0x04 force-released by an admin")
    assert isinstance(reply, ServerError)
    assert reply.error.code == "force-released"
    assert reply.error.detail == "force-released by an admin"
    assert parse_reply("ERROR 0x01").error.code == "server-going-away"  # type: ignore[union-attr]
    assert parse_reply("ERROR 0x09 claim unknown").error.code == "claim-unknown"  # type: ignore[union-attr]
    assert parse_reply("REDIRECT db2.internal:7071") == Redirect(("db2.internal", 7071))
    assert parse_reply("MOVED [::1]:7071") == Moved(("::1", 7071))


def test_an_unknown_error_code_is_a_protocol_error_that_keeps_the_words() -> None:
    reply = parse_reply("ERROR 0x7f something new")
    assert isinstance(reply, ServerError)
    assert reply.error.code == "protocol-error"
    assert "something new" in reply.error.detail


@pytest.mark.parametrize(
    "line",
    [
        "ACQUIRED",
        "ACQUIRED x",
        "ACQUIRED -1",
        "ACQUIRED 18446744073709551616",  # 2^64
        "ACQUIRED 123456789012345678901",  # 21 digits
        "ACQUIRED 1_000",
        "ACQUIRED ١٢٣",  # Arabic-Indic digits: int() would take them
        "ACQUIRED 1 ",
        "ACQUIRED  1",
        "WAITING 0",
        "WAITING -1",
        "WAITING 1234567890123456",
        "ERROR 1 text",
        "ERROR 0xZZ",
        "ERROR 0x12345 text",
        "ERROR",
        "REDIRECT :",
        "REDIRECT host",
        "REDIRECT host:0",
        "REDIRECT host:65536",
        "MOVED",
        "HELLO",
        "acquired 1",
        "A jobs/x 1",
    ],
)
def test_refuses_what_a_client_cannot_read(line: str) -> None:
    with pytest.raises(BatonError) as caught:
        parse_reply(line)
    assert caught.value.code == "protocol-error"


def test_addresses() -> None:
    assert parse_address("h:1") == ("h", 1)
    assert parse_address("h", 7071) == ("h", 7071)
    assert parse_address("h") is None
    assert parse_address("[::1]:80") == ("::1", 80)
    assert parse_address("::1", 7071) == ("::1", 7071)
    assert parse_address("[::1") is None


def test_encodes_the_client_lines() -> None:
    assert encode_acquire("jobs/x", 10000) == "ACQUIRE jobs/x 10000"
    assert encode_acquire("jobs/x", 10000, "ab" * 16) == "ACQUIRE jobs/x 10000 " + "ab" * 16
    assert encode_resume("jobs/x", "ab" * 16) == "RESUME jobs/x " + "ab" * 16
    assert encode_client("w@h pid 1") == "CLIENT w@h pid 1"


def test_line_reader_splits_lines_across_chunks_and_takes_crlf() -> None:
    reader = LineReader()
    assert reader.feed(b"ACQUI") == []
    assert reader.feed(b"RED 1\r\nWAIT") == ["ACQUIRED 1"]
    assert reader.feed(b"ING 2\n\n") == ["WAITING 2"]
    assert reader.pending == 0


def test_line_reader_refuses_a_10_mb_line_without_buffering_it() -> None:
    reader = LineReader()
    chunk = b"x" * 65536
    with pytest.raises(BatonError) as caught:
        for _ in range(160):  # 10 MB, as the kit's hostile vector sends it
            reader.feed(chunk)
            assert reader.pending <= MAX_LINE_BYTES + len(chunk)
    assert caught.value.code == "protocol-error"


def test_line_reader_refuses_bytes_that_are_not_utf8() -> None:
    with pytest.raises(BatonError) as caught:
        LineReader().feed(b"ERROR 0x01 \xff\xfe\n")
    assert caught.value.code == "protocol-error"


# --- random and hostile bytes ---

WORDS = ["ACQUIRED", "WAITING", "ERROR", "REDIRECT", "MOVED", "HEARTBEAT", ""]
VALID = ["ACQUIRED 1", "ACQUIRED 18446744073709551615", "WAITING 3", "ERROR 0x04 force-released", "ERROR 0x01", "REDIRECT h:7071", "MOVED [::1]:7071"]
PIECES = [" ", "\n", "\r\n", "0x", "0x01", ":", "[", "]", "18446744073709551615", "18446744073709551616", "9" * 21, "\x00", "\xff"]


def _hostile_line(rng: random.Random) -> bytes:
    """Right lines, almost-right lines (a known word, odd fields) and plain random bytes."""
    roll = rng.random()
    if roll < 0.2:
        return rng.choice(VALID).encode()
    if roll < 0.4:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
    parts = [rng.choice(WORDS)]
    for _ in range(rng.randint(0, 4)):
        roll = rng.random()
        if roll < 0.4:
            parts.append(rng.choice(PIECES))
        elif roll < 0.7:
            parts.append(str(rng.randint(0, 2**70)))
        else:
            parts.append("".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(0, 6))))
    return " ".join(parts).encode("utf-8", "surrogatepass")


def test_random_and_hostile_bytes_give_a_reply_or_a_clear_protocol_error() -> None:
    rng = random.Random(28)
    outcomes = {"reply": 0, "error": 0}
    for _ in range(5000):
        reader = LineReader(max_line_bytes=256)
        data = b"\n".join(_hostile_line(rng) for _ in range(rng.randint(1, 4)))
        try:
            # Fed in random cuts, as a socket delivers them.
            while data:
                cut = rng.randint(1, len(data))
                for line in reader.feed(data[:cut]):
                    try:
                        reply = parse_reply(line)
                        assert isinstance(reply, (Acquired, Waiting, ServerError, Redirect, Moved))
                        if isinstance(reply, Acquired):
                            assert 0 <= reply.token <= U64_MAX
                        outcomes["reply"] += 1
                    except BatonError as error:
                        assert error.code == "protocol-error", error
                        outcomes["error"] += 1
                data = data[cut:]
        except BatonError as error:
            assert error.code == "protocol-error", error
            outcomes["error"] += 1
    assert outcomes["reply"] > 100 and outcomes["error"] > 100, outcomes


def test_random_lines_never_crash_the_claim_machine() -> None:
    """Whatever arrives, in whatever phase, the machine ends in a settle or a loss (or goes on),
    never an exception, and never holds without a token it read."""
    rng = random.Random(2828)
    for round_ in range(2000):
        now = 0.0
        machine = ClaimMachine("x", 10000, now=now, claim_key=("ab" * 16) if round_ % 2 else None)
        machine.start(("127.0.0.1", 1), now)
        machine.opened(now)
        for _ in range(rng.randint(1, 6)):
            now += rng.random()
            raw = _hostile_line(rng) if rng.random() < 0.5 else rng.choice(
                [b"ACQUIRED 5", b"WAITING 1", b"ERROR 0x04 x", b"REDIRECT h:1", b"MOVED h:2", b"ACQUIRED 6"]
            )
            try:
                lines = LineReader().feed(raw + b"\n")
            except BatonError as error:
                machine.bad_bytes(error, now)
                lines = []
            for line in lines:
                machine.line(line, now)
            machine.tick(now)
        kinds = [a[0] for a in machine.take_actions()]
        assert kinds.count("settle") <= 1 and kinds.count("lose") <= 1
        if "lose" in kinds:
            assert "settle" in kinds  # lost only what was held
