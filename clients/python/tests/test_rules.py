"""The rules ported from the TypeScript library: keys, identities, durations. The key and
identity rules are checked against the TypeScript functions themselves (run by node), on
thousands of random strings, so the port cannot drift from the server's parser."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import tempfile
from decimal import Decimal

import pytest

from baton_client import BatonError
from baton_client._durations import is_forever, lease_to_wire, session_lease_ms, wait_to_wire
from baton_client._identity import DEFAULT_IDENTITY, default_identity, is_valid_identity, resolve_identity, to_identity
from baton_client._keys import is_valid_key
from conftest import REPO_ROOT

# Characters chosen to cross every branch of the rules: visible ASCII, the space, ASCII controls,
# DEL, C1 controls (NEL), other whitespace (NBSP, ogham, en quad, U+3000, U+202F), line and
# paragraph separators, format characters (ZWSP, ZWJ, BOM, bidi overrides, U+180E), letters in
# other scripts, astral characters, combining marks, private use and lone surrogates.
POOL = (
    list("abcXYZ019/:-_.@")
    + [" ", "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "\x85", "\xa0", "\u1680", "\u2000", "\u200a", "\u3000", "\u202f", "\u205f"]
    + ["\u2028", "\u2029", "\u200b", "\u200d", "\ufeff", "\u202e", "\u180e", "\u00ad"]
    + ["é", "ключ", "日本", "\U0001f512", "\U00010348", "\u0301", "\ue000", "\ud800", "\udfff"]
)

TS_RULES = """
import {{ isValidKey }} from '{root}/lib/protocol/key-rules.ts';
import {{ isValidClientName, toClientName }} from '{root}/lib/protocol/client-name.ts';
import {{ readFileSync }} from 'node:fs';
const inputs = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(inputs.map((s) => [isValidKey(s), isValidClientName(s), toClientName(s)])));
"""


def _random_strings(count: int) -> list:
    rng = random.Random(28)
    out = ["", " ", "a", "x" * 250, "x" * 251, "é" * 125, "é" * 126, "y" * 128, "y" * 129, "a b", " a", "a "]
    while len(out) < count:
        length = rng.choice([1, 2, 3, 5, 8, 20, 60, 130, 260])
        text = "".join(rng.choice(POOL) for _ in range(length))
        # A high surrogate right before a low one is one character in JavaScript (its strings are
        # UTF-16) and two in Python: not the same input, so never generated.
        out.append(text.replace("\ud800\udfff", "\ud800x\udfff"))
    return out


def test_key_and_identity_rules_agree_with_the_typescript_library() -> None:
    inputs = _random_strings(4000)
    with tempfile.NamedTemporaryFile("w", suffix=".mts", delete=False) as script:
        script.write(TS_RULES.format(root=REPO_ROOT))
    try:
        # ensure_ascii keeps lone surrogates as \\ud800 escapes, which JavaScript reads back as such.
        result = subprocess.run(
            ["node", "--import", "tsx", script.name],
            input=json.dumps(inputs),
            capture_output=True,
            text=True,
            cwd=str(REPO_ROOT),
            timeout=120,
        )
    finally:
        os.unlink(script.name)
    assert result.returncode == 0, result.stderr
    expected = json.loads(result.stdout)
    mismatches = []
    for text, (key_ok, identity_ok, cleaned) in zip(inputs, expected):
        mine = [is_valid_key(text), is_valid_identity(text), to_identity(text)]
        if mine != [key_ok, identity_ok, cleaned]:
            mismatches.append((text, mine, [key_ok, identity_ok, cleaned]))
    assert mismatches == [], mismatches[:5]


def test_default_identity_is_user_at_host_pid_cut_to_128_bytes() -> None:
    identity = default_identity()
    assert identity is not None and is_valid_identity(identity)
    assert identity.endswith(f" pid {os.getpid()}")
    long = to_identity("ü" * 100 + " pid 1")
    assert long is not None and len(long.encode()) <= 128 and long == "ü" * 64
    assert resolve_identity(DEFAULT_IDENTITY) == identity
    assert resolve_identity() == identity
    assert resolve_identity(None) is None
    assert resolve_identity("worker-7@host-3 pid 4121") == "worker-7@host-3 pid 4121"
    with pytest.raises(BatonError) as info:
        resolve_identity("tab\there")
    assert info.value.code == "bad-identity"
    assert repr(DEFAULT_IDENTITY) == "DEFAULT_IDENTITY"


@pytest.mark.parametrize(
    "seconds,wire",
    [
        (30, "30"),
        (30.0, "30"),
        (0.25, "0.25"),
        (0.1 + 0.2, "0.3"),  # no float noise
        (1e-7, "0.000001"),  # positive never rounds to "0" (which means forever for a wait)
        (0.0000015, "0.000002"),
        (12345.678, "12345.678"),
        (Decimal("0.5"), "0.5"),
        (999999999999, "999999999999"),
    ],
)
def test_durations_on_the_keyed_wire_are_exact_decimal_seconds(seconds, wire) -> None:
    assert lease_to_wire(seconds) == wire
    assert wait_to_wire(seconds) == wire


def test_waits_that_mean_forever() -> None:
    for forever in (None, 0, 0.0, math.inf):
        assert is_forever(forever)
        assert wait_to_wire(forever) == "0"


@pytest.mark.parametrize("bad", [0, -1, -0.5, math.nan, math.inf, True, "30", None, 10**12, 1e12])
def test_bad_leases_are_refused_with_bad_lease(bad) -> None:
    with pytest.raises(BatonError) as info:
        lease_to_wire(bad)
    assert info.value.code == "bad-lease"


@pytest.mark.parametrize("bad", [-1, -0.001, math.nan, -math.inf, False, "1", 10**12])
def test_bad_waits_are_refused_with_bad_wait(bad) -> None:
    with pytest.raises(BatonError) as info:
        wait_to_wire(bad)
    assert info.value.code == "bad-wait"


def test_session_leases_are_whole_milliseconds() -> None:
    assert session_lease_ms(10) == 10000
    assert session_lease_ms(0.25) == 250
    assert session_lease_ms(0.0004) == 1  # never 0
    assert session_lease_ms(1.0005) == 1001  # half up
    with pytest.raises(BatonError):
        session_lease_ms(0)
    with pytest.raises(BatonError):
        session_lease_ms(10**13)
