"""The one rule for "is the process that wrote this still alive", for lock files,
temporary files and a run's owner record.

Same host only: ``os.kill(pid, 0)`` says whether the pid exists. A pid can be reused by
an unrelated process after the owner died; on Linux ``/proc/<pid>/cmdline`` must then
mention python or taillens for :func:`owner_alive` to count it (an empty one is a zombie
or a kernel thread). That can take another Python program for the owner, which only
makes the caller more careful (a lock kept, a run not resumed). Not checked on Windows,
where ``os.kill`` would end the process.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Literal

Liveness = Literal["alive", "gone", "unknown"]


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (any user's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def owner_alive(pid: int, host: str) -> Liveness:
    """Whether the TailLens process ``pid`` on ``host`` still runs: ``unknown`` for
    another host or where this cannot be checked (see the module docstring)."""
    if host != socket.gethostname() or os.name == "nt":
        return "unknown"
    if pid == os.getpid():
        return "alive"
    if pid <= 0:
        return "gone"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        pass  # it exists, under another user
    except OSError:
        return "unknown"
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().lower()
    except OSError:
        return "alive"  # no /proc (macOS): the pid exists, take it for the owner
    return "alive" if b"python" in cmdline or b"taillens" in cmdline else "gone"
