"""Failure at scale is an error, not a hang: four processes of two simulated CPU devices each
(``mp4_worker.py``); one of them dies, before joining or inside a collective, and every other
process raises ``reactant.distributed.DistributedError`` naming it and the timeout (4 s here),
then ends. The group is bounded by a subprocess timeout: a hang fails the test, it never
blocks the suite; every process is reaped. Long-form tier (``REACTANT_SLOW=1``, run by
``.ci/run``): each test starts four processes and waits out the timeout (8-20 s on 2 cores)."""

import os
import signal

import pytest
from mp_procs import run_group, wait_gone

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mp4_worker.py")
BOUND = 120  # seconds for a whole group: only reached by a hang
VICTIM = 3


def check_reaped_and_victim_killed(ended, victim: int = VICTIM) -> None:
    assert all(e.returncode is not None for e in ended)  # waited for: no zombie left
    assert ended[victim].returncode == -signal.SIGKILL and ended[victim].result is None


@pytest.mark.slow
def test_a_process_that_never_joins_makes_initialize_raise_everywhere():
    ended = run_group(WORKER, "never_joins", 4, BOUND)
    check_reaped_and_victim_killed(ended)
    for pid in range(3):
        e = ended[pid]
        assert e.returncode == 0 and e.result is not None, e.output
        err = e.result["error"]
        assert err["is_distributed_error"], err
        msg = err["message"]
        # (a process that starts more than 4 s after process 0 finds no coordinator any more)
        assert (f"process {pid} of 4: not every process joined the run within 4 s" in msg
                or "could not be reached within the initialization timeout" in msg), msg
        assert "reactant.distributed.initialize(" in msg  # the user's line
        assert "REACTANT_DISTRIBUTED_TIMEOUT" in msg  # the hint says how to wait longer
        assert not e.result["initialized"]


@pytest.mark.slow
@pytest.mark.parametrize("victim", [0, 3])  # (0 serves the coordinator)
def test_a_process_that_dies_inside_a_collective_is_an_error_on_the_others(victim):
    """Process 0 serves the coordinator (in a process of its own, which must also end); any
    other process dies the same way for the others."""
    ended = run_group(WORKER, "dies_in_collective", 4, BOUND, env={"MP4_VICTIM": str(victim)})
    check_reaped_and_victim_killed(ended, victim)
    for pid in sorted(set(range(4)) - {victim}):
        e = ended[pid]
        assert e.result is not None, e.output
        assert e.result["first"] == 120.0  # the program ran on all four processes before
        err = e.result["error"]
        assert err["is_distributed_error"], err
        msg = err["message"]
        assert f"this is process {pid} of 4" in msg
        assert f"process {victim} stopped responding: no sign of life for more than 4 s" in msg
        assert 'out["second"] = float(total(x))' in msg  # the user's line that waited
        assert "REACTANT_DISTRIBUTED_TIMEOUT" in msg
        # the run is over: the next call fails at once, and the process ends with status 1
        assert e.result["after"]["is_distributed_error"]
        assert f"process {victim} stopped responding" in e.result["after"]["message"]
        assert e.returncode == 1, e.output
    if victim == 0:  # the coordination service served the others until they ended, then ended
        (line,) = [x for x in ended[0].output.splitlines() if x.startswith("COORDINATOR ")]
        assert wait_gone(int(line.split()[1]), BOUND)


@pytest.mark.slow
def test_a_process_whose_script_ends_while_the_others_wait_is_an_error():
    ended = run_group(WORKER, "ends_early", 4, BOUND)
    assert all(e.returncode is not None for e in ended)
    for e in ended:
        assert e.result is not None and e.result["first"] == 120.0, e.output
        assert e.returncode == 1, e.output  # all of them: the run failed
    errors = [ended[pid].result["error"] for pid in range(3)]
    assert all(err["is_distributed_error"] for err in errors)
    # the one that detects it first names process 3; the others may hear of it through them
    assert any("process 3 ended its script while this process waited more than 4 s" in err["message"]
               for err in errors)
    assert "error" not in ended[VICTIM].result
