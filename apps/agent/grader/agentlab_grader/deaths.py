"""How the judge process ended, as evidence: a death before pytest started is ours, after it the candidate's.

The judge process tells its supervisor once, over the control socket, that pytest's session has
started (before collection, so before any candidate code or candidate answer reaches it). A
message already sent cannot be taken back, so a candidate cannot hide the mark. From that point
on, nothing but the candidate (its code in the in-process mode, its answers in the judge) can
make the judge die: an abort, a signal it sends itself, an internal error such as an unwritable
report, or exit 120 are a `died` event (graded `tampered`), never an `infra_error` that would be
retried and dropped. The agent's own stop is reported by the host and never reaches this code.
"""

import os
import signal
import socket

# The one message the judge process sends on its control socket when pytest's session starts.
STARTED = b"S"
# The judge process's own exit status when something raised out of pytest.main.
JUDGE_FAILED = 120
_LIMIT_SIGNALS = (signal.SIGXCPU, signal.SIGXFSZ, signal.SIGKILL, signal.SIGSEGV)


class StartMarker:
    """A pytest plugin: sends STARTED when the session starts, before anything is collected."""

    def __init__(self, ctl: socket.socket):
        self.ctl = ctl

    def pytest_sessionstart(self, session) -> None:
        # If the mark cannot be sent the judge must not go on: without it a later death of the
        # candidate's making would read as the grader's own failure.
        if self.ctl.send(STARTED) != len(STARTED):
            raise OSError("the start mark was not sent")


def drain_started(ctl: socket.socket) -> bool:
    """True if a STARTED message is still queued on the supervisor's end (read without blocking)."""
    seen = False
    while True:
        try:
            msg = ctl.recv(16, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return seen
        except OSError:
            return seen
        if not msg:
            return seen
        seen = seen or msg == STARTED


def classify_end(res: dict, status: int, started: bool) -> None:
    """Sets `limit`, `infra_error` or a `died` event on `res` from the judge's wait status."""
    if res["limit"] is not None:
        return  # the supervisor stopped it (wall clock, output): that verdict stands
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in _LIMIT_SIGNALS:
            res["limit"] = "resource_limit"
            res["limit_detail"] = f"killed by {res['signal']} (cpu, file size or memory limit)"
        elif started:
            died(res, f"the judge process was killed by {res['signal']} after pytest started")
        else:  # a signal from outside before any candidate code ran: not the candidate's doing
            res["infra_error"] = f"the judge process was interrupted by {res['signal']}"
    elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == JUDGE_FAILED:
        tail = res["stdout"][-300:]
        if started:
            died(res, "the judge failed after pytest started: " + tail)
        else:
            res["infra_error"] = "the judge failed before pytest started: " + tail


def died(res: dict, detail: str) -> None:
    res["events"] = [*res["events"], {"kind": "died", "test": "", "detail": detail[:300]}]
