"""Runs a group of worker processes of a multi-process test (a helper module, not a test):
every process is started, waited for with a bound, and killed and reaped past it, so a test
never hangs and leaves no process behind."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass


@dataclass
class Ended:
    """One worker process after it ended."""

    returncode: int
    result: dict | None  # its ``RESULT`` JSON line, if it printed one
    output: str  # its stdout and stderr (the tail, for failure messages)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_group(worker: str, scenario: str, n: int, timeout: float, env: dict | None = None) -> list[Ended]:
    """Start ``n`` processes ``python worker scenario port i`` (``env``: more environment
    variables); return how each ended. Past ``timeout`` seconds all still running are killed
    and the test fails (a hang is a bug)."""
    import pytest

    port = free_port()
    extra = env or {}
    env = {k: v for k, v in os.environ.items()
           if k != "XLA_FLAGS" and not k.startswith(("REACTANT_COORDINATOR", "REACTANT_NUM_PROC", "REACTANT_PROCESS_ID",
                                                     "REACTANT_DISTRIBUTED", "JAX_COORDINATOR"))}
    env["REACTANT_EQSAT_CALIBRATE"] = "0"  # the default cost constants: no calibration run
    env.update(extra)
    procs = [subprocess.Popen([sys.executable, worker, scenario, str(port), str(i)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(n)]
    outs: list[str] = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=timeout)[0])
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        tails = [p.communicate()[0][-3000:] for p in procs]
        pytest.fail(f"{scenario}: the processes did not end within {timeout} s (a hang)\n"
                    + "\n".join(f"--- process {i}:\n{t}" for i, t in enumerate(tails)))
    ended = []
    for p, out in zip(procs, outs):
        lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
        ended.append(Ended(p.returncode, json.loads(lines[-1][len("RESULT "):]) if lines else None, out[-3000:]))
    return ended


def wait_gone(pid: int, bound: float) -> bool:
    """Whether process ``pid`` (not a child of ours) ended, and was reaped, within ``bound``
    seconds."""
    import time

    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False
