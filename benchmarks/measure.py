"""Run a command and measure it: exit status, wall time and the child's own peak RSS.

Shared by the benchmarks that time whole CLI runs (run as scripts: ``from measure import
run_measured`` finds this file beside them).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any


def _hwm_mb(pid: int, last: float) -> float:
    """The process's own peak RSS (VmHWM) so far. Not wait4's ru_maxrss: on Linux that
    also counts this (parent) process's memory, copied at fork, before the exec."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return max(last, int(line.split()[1]) / 1024)
    except OSError:
        pass
    return last


def run_measured(
    command: list[str], cwd: Path, env: dict[str, str], limit_s: float, stdout: Any, stderr: Any
) -> tuple[int | None, float, float]:
    """(exit status or None when killed at ``limit_s``, seconds, peak RSS in MB)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True
    )
    peak = 0.0
    code: int | None = None
    while True:
        peak = _hwm_mb(process.pid, peak)
        finished, status, _ = os.wait4(process.pid, os.WNOHANG)
        if finished:
            code = os.waitstatus_to_exitcode(status)
            break
        if time.perf_counter() - started > limit_s:
            os.killpg(process.pid, signal.SIGKILL)
            os.wait4(process.pid, 0)
            break
        time.sleep(0.05)
    process.returncode = code if code is not None else -9
    return code, time.perf_counter() - started, peak
