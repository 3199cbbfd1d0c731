"""Ending candidate processes: SIGKILL, and waiting until a killed candidate's namespace is gone."""

import os
import select
import signal
import time

from .cand_template import PidFd


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# How long a killed candidate may take to be gone before the next one is spawned anyway.
GONE_WAIT_S = 5.0


def kill_and_wait(pids: list[int]) -> None:
    """SIGKILLs each candidate (PID 1 of its own PID namespace) and waits until it has exited,
    which for a namespace's init is after every process in it was killed and reaped. Without the
    wait a fork bomb's processes are still dying when the next candidate or judge is forked, and
    they all count against the sandbox's one RLIMIT_NPROC: that fork fails and an honest candidate
    would get `infra_error`."""
    fds = []
    for pid in pids:
        try:
            fd = os.dup(pid.fd) if isinstance(pid, PidFd) else os.pidfd_open(pid)
        except (ProcessLookupError, OSError):
            continue
        fds.append(fd)
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + GONE_WAIT_S
    for fd in fds:
        try:
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)
