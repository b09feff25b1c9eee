"""The heartbeat schedule and one claim's state machine on a fake clock: no sockets, no sleeps."""

from __future__ import annotations

from typing import List, Optional, Tuple

import pytest

from baton_client._heartbeat import Confirmation, HeartbeatSchedule
from baton_client._session_machine import ClaimMachine
from baton_client._session_outcome import Outcome

LEASE = 10.0


def test_base_interval_is_a_quarter_lease_before_any_sample() -> None:
    assert HeartbeatSchedule(LEASE, 0.05).interval == pytest.approx(2.5)


def test_interval_leaves_room_for_two_smoothed_round_trips() -> None:
    schedule = HeartbeatSchedule(LEASE, 0.05)
    schedule.sample(0.1)
    assert schedule.smoothed_rtt == pytest.approx(0.1)
    assert schedule.interval == pytest.approx(2.5 - 0.2)


def test_smoothed_rtt_is_an_ewma_with_alpha_0_2() -> None:
    schedule = HeartbeatSchedule(LEASE, 0.05)
    schedule.sample(0.1)
    schedule.sample(0.6)
    assert schedule.smoothed_rtt == pytest.approx(0.1 + 0.2 * 0.5)
    assert schedule.last_rtt == pytest.approx(0.6)
    schedule.sample(0.2)
    assert schedule.smoothed_rtt == pytest.approx(0.2 + 0.2 * (0.2 - 0.2))
    assert schedule.samples == 3


def test_interval_is_clamped_between_the_floor_and_the_base() -> None:
    schedule = HeartbeatSchedule(LEASE, 0.5)
    schedule.sample(5.0)  # a round trip longer than the lease: the floor holds
    assert schedule.interval == pytest.approx(0.5)
    tiny = HeartbeatSchedule(0.1, 0.05)  # floor above lease/4: lease/4 wins
    assert tiny.interval == pytest.approx(0.025)
    never_negative = HeartbeatSchedule(LEASE, 0.0)
    never_negative.sample(100.0)
    assert never_negative.interval == 0.0
    assert HeartbeatSchedule(LEASE, 0.05).interval <= LEASE / 4


def test_confirmation_keeps_one_request_in_flight_and_counts_silence_from_the_send() -> None:
    conf = Confirmation(LEASE, 0.05, now=0.0)
    conf.sent(0.0, is_heartbeat=False)
    assert not conf.heartbeat_due(100.0)  # nothing answered yet: no rhythm, and one in flight
    assert conf.answered(0.3)
    assert conf.anchor == 0.0  # the send time, not the answer's arrival
    assert conf.silence_deadline() == pytest.approx(8.0)
    assert not conf.heartbeat_due(2.4)
    assert conf.heartbeat_due(2.5)
    conf.sent(2.5, is_heartbeat=True)
    assert not conf.heartbeat_due(10.0)  # at most one in flight
    assert conf.answered(2.6)
    assert conf.schedule.smoothed_rtt == pytest.approx(0.1)
    assert conf.anchor == 2.5
    assert conf.silence_deadline() == pytest.approx(2.5 + 8.0)
    assert not conf.answered(2.7)  # an answer to nothing


# --- the machine, driven by hand ---

Actions = List[Tuple[object, ...]]


def _machine(lease_ms: int = 10000, **kwargs: object) -> Tuple[ClaimMachine, Actions]:
    machine = ClaimMachine("jobs/x", lease_ms, now=0.0, **kwargs)  # type: ignore[arg-type]
    machine.start(("n1", 7071), 0.0)
    machine.opened(0.0)
    return machine, machine.take_actions()


def _sends(actions: Actions) -> List[object]:
    return [a[1] for a in actions if a[0] == "send"]


def _settled(actions: Actions) -> Optional[Outcome]:
    for action in actions:
        if action[0] == "settle":
            return action[1]  # type: ignore[return-value]
    return None


def test_machine_sends_client_and_acquire_in_one_write_then_heartbeats_on_schedule() -> None:
    machine, actions = _machine(identity="w@h pid 1")
    assert actions[0] == ("connect", 1, ("n1", 7071))
    assert _sends(actions) == ["CLIENT w@h pid 1\nACQUIRE jobs/x 10000"]
    machine.line("ACQUIRED 18446744073709551615", 0.01)
    outcome = _settled(machine.take_actions())
    assert outcome is not None and outcome.kind == "held"
    assert machine.token == 2**64 - 1
    assert machine.next_deadline() == pytest.approx(2.5)
    machine.tick(2.49)
    assert _sends(machine.take_actions()) == []
    machine.tick(2.5)
    assert _sends(machine.take_actions()) == ["HEARTBEAT"]
    machine.tick(5.5)  # the first heartbeat unanswered: no second one
    assert _sends(machine.take_actions()) == []
    machine.line("ACQUIRED 18446744073709551615", 2.6)
    assert machine.conf.schedule.smoothed_rtt == pytest.approx(0.1)
    assert machine.next_deadline() == pytest.approx(2.5 + 2.5 - 0.2)


def test_machine_gives_up_at_0_8_lease_without_an_answer() -> None:
    machine, _ = _machine()
    machine.line("ACQUIRED 7", 0.01)
    machine.take_actions()
    machine.tick(2.5)
    machine.take_actions()  # HEARTBEAT sent at 2.5, never answered
    # The last confirmation is the ACQUIRE sent at 0.0: 0.8 x 10 s after it, ownership is not
    # vouched for any more, whatever was sent since.
    machine.tick(7.99)
    assert not [a for a in machine.take_actions() if a[0] == "lose"]
    machine.tick(8.0)
    lost = [a for a in machine.take_actions() if a[0] == "lose"]
    assert lost and lost[0][1].code == "lease-expired"  # type: ignore[union-attr]


def test_machine_takes_the_pushed_acquired_while_queued() -> None:
    machine, _ = _machine()
    machine.line("WAITING 2", 0.01)
    assert machine.phase == "queued"
    machine.tick(2.5)
    assert _sends(machine.take_actions()) == ["HEARTBEAT"]
    machine.line("ACQUIRED 9", 2.55)  # the push, before the heartbeat's answer
    outcome = _settled(machine.take_actions())
    assert outcome is not None and outcome.kind == "held" and machine.token == 9
    machine.line("ACQUIRED 9", 2.6)  # the heartbeat's own answer
    assert machine.phase == "held" and machine.conf.heartbeats == 1


@pytest.mark.parametrize(
    "line, code",
    [("ERROR 0x04 force-released", "force-released"), ("ERROR 0x01 going away", "server-going-away"), ("REDIRECT n2:7071", "server-going-away"), ("ACQUIRED 8", "protocol-error"), ("WAITING 1", "protocol-error")],
)
def test_machine_loses_a_held_claim_on_errors_redirects_and_replies_to_nothing(line: str, code: str) -> None:
    machine, _ = _machine()
    machine.line("ACQUIRED 7", 0.01)
    machine.take_actions()
    machine.line(line, 1.0)
    actions = machine.take_actions()
    lost = [a for a in actions if a[0] == "lose"]
    assert lost and lost[0][1].code == code  # type: ignore[union-attr]
    assert ("drop",) in actions


def test_machine_retries_elsewhere_on_0x01_while_waiting_and_fails_on_client_errors() -> None:
    machine, _ = _machine()
    machine.line("WAITING 1", 0.01)
    machine.line("ERROR 0x01 server going away", 1.0)
    outcome = _settled(machine.take_actions())
    assert outcome is not None and outcome.kind == "retry" and outcome.answered
    machine, _ = _machine()
    machine.line("ERROR 0x05 kicked", 1.0)
    outcome = _settled(machine.take_actions())
    assert outcome is not None and outcome.kind == "failed" and outcome.reason.code == "kicked"  # type: ignore[union-attr]


def test_machine_times_out_a_wait() -> None:
    machine, _ = _machine(give_up_after=0.5)
    machine.line("WAITING 1", 0.01)
    machine.tick(0.5)
    outcome = _settled(machine.take_actions())
    assert outcome is not None and outcome.kind == "timed-out"


def test_resumable_claim_resumes_at_the_moved_address_and_keeps_its_token() -> None:
    key = "ab" * 16
    machine, actions = _machine(claim_key=key, resume_addresses=[("n1", 7071), ("n2", 7071)])
    assert _sends(actions) == [f"ACQUIRE jobs/x 10000 {key}"]
    machine.line("ACQUIRED 7", 0.01)
    machine.take_actions()
    machine.line("MOVED n2:7071", 1.0)
    actions = machine.take_actions()
    assert ("connect", 2, ("n2", 7071)) in actions
    assert not [a for a in actions if a[0] == "lose"]
    machine.opened(1.1)
    assert _sends(machine.take_actions()) == [f"RESUME jobs/x {key}"]
    machine.line("ACQUIRED 7", 1.2)
    assert machine.phase == "held" and not machine.resuming
    assert not [a for a in machine.take_actions() if a[0] == "lose"]


def test_resumable_claim_looks_for_its_claim_at_the_next_address_within_0_8_min_lease_max_park() -> None:
    key = "cd" * 16
    machine, _ = _machine(claim_key=key, resume_addresses=[("n1", 7071), ("n2", 7071)], max_park=5.0)
    machine.line("ACQUIRED 7", 0.01)
    machine.take_actions()
    machine.closed(None, 1.0)  # dropped without a line: the node died
    actions = machine.take_actions()
    assert ("connect", 3, ("n2", 7071)) in actions
    assert machine.next_deadline() == pytest.approx(0.8 * 5.0)  # min(lease 10, max_park 5)
    machine.tick(3.99)
    assert not [a for a in machine.take_actions() if a[0] == "lose"]
    machine.tick(4.0)
    lost = [a for a in machine.take_actions() if a[0] == "lose"]
    assert lost and lost[0][1].code == "lease-expired"  # type: ignore[union-attr]


def test_resume_answered_with_claim_unknown_or_another_token_is_lost() -> None:
    for answer, code in (("ERROR 0x09 claim unknown", "claim-unknown"), ("ACQUIRED 8", "protocol-error")):
        machine, _ = _machine(claim_key="ef" * 16, resume_addresses=[("n1", 7071), ("n2", 7071)])
        machine.line("ACQUIRED 7", 0.01)
        machine.line("MOVED n2:7071", 1.0)
        machine.opened(1.1)
        machine.take_actions()
        machine.line(answer, 1.2)
        lost = [a for a in machine.take_actions() if a[0] == "lose"]
        assert lost and lost[0][1].code == code  # type: ignore[union-attr]


def test_seed_claim_is_lost_when_its_connection_drops_and_moved_is_a_protocol_error() -> None:
    machine, _ = _machine()
    machine.line("ACQUIRED 7", 0.01)
    machine.closed(None, 1.0)
    lost = [a for a in machine.take_actions() if a[0] == "lose"]
    assert lost and lost[0][1].code == "connection-lost"  # type: ignore[union-attr]
    machine, _ = _machine()
    machine.line("ACQUIRED 7", 0.01)
    machine.line("MOVED n2:7071", 1.0)
    lost = [a for a in machine.take_actions() if a[0] == "lose"]
    assert lost and lost[0][1].code == "protocol-error"  # type: ignore[union-attr]
