"""A judge session: several candidates of one task graded by one supervisor, one answer each.

The supervisor reads the session's request (the task's tests, support files, limits and the first
candidate), makes the judge's namespaces and workspace once, and then grades each candidate as
a single request is graded (judge.grade_in): a fresh candidate process (from the session's
candidate template when the task has support modules to import, cand_template.py; else from the
candidate zygote) and a fresh judge process forked before either sees anything of that candidate. The next
candidate is read only after the previous one's answer; `session` is the most it may send, and
`{"end": true}` ends a session early (the host keeps one open after a single grade, for the
next grade of the same task). Between candidates nothing survives:
a reaper (PID 1 of the session's PID namespace) kills every process left in it, and the report
directory, the judge's temporary directories, /tmp and /dev/shm are emptied. Candidates never
shared anything in the first place: each has its own namespaces and tmpfs (candidate.py).
"""

import os
import shutil
import signal
import time

from . import cand_template, isolation, judge, request_check, warm
from .reap import GONE_WAIT_S


class _Cold:
    warm, ns_pid = False, 0

    def close(self) -> None:
        pass


_COLD = _Cold()
END = {"end": True}


class Reaper:
    """PID 1 of the session's PID namespace (forked right after it was made): orphans are reparented
    to it and reaped; on request it kills every other process of the namespace."""

    def __init__(self):
        self.cmd_r, self.cmd_w = os.pipe()
        self.ack_r, self.ack_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            self._serve()
        os.close(self.cmd_r)
        os.close(self.ack_w)

    def _serve(self) -> None:
        try:
            isolation.die_with_parent()
            os.close(self.cmd_w)
            os.close(self.ack_r)
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # reparented orphans are reaped by the kernel
            while True:
                keep = os.read(self.cmd_r, 16)
                if not keep:
                    break
                stays = {"1", keep.decode()}
                if keep == b"0":
                    try:
                        os.kill(-1, signal.SIGKILL)  # from PID 1: every process of the namespace but itself
                    except ProcessLookupError:
                        pass
                else:  # a warm template stays: every other process of the namespace goes
                    for pid in _others(stays):
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                # Acknowledged once they are gone (reaped by the kernel), not while they die: they
                # count against the sandbox's process limit that the next judge is forked under.
                deadline = time.monotonic() + GONE_WAIT_S
                while _others(stays) and time.monotonic() < deadline:
                    time.sleep(0.002)
                os.write(self.ack_w, b"k")
        finally:
            os._exit(0)

    def kill_all(self, keep: int = 0) -> None:
        os.write(self.cmd_w, str(keep).encode())
        if os.read(self.ack_r, 1) != b"k":
            raise RuntimeError("the session's reaper is gone")


def _others(stays: set[str]) -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and name not in stays]


def _empty(path: str) -> None:
    try:
        names = os.listdir(path)
    except FileNotFoundError:
        return
    for name in names:
        p = os.path.join(path, name)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.unlink(p)


def check_candidate(msg, index: int) -> dict:
    if type(msg) is not dict or set(msg) != {"id", "candidate"} or type(msg["id"]) is not str:
        raise request_check.RequestError(f"session candidate {index}: expected exactly the keys id and candidate")
    files = msg["candidate"]
    if type(files) is not list or not all(
        type(f) is dict and set(f) == {"path", "content"} and all(type(v) is str for v in f.values()) for f in files
    ):
        raise request_check.RequestError(f"session candidate {index}: candidate must be a list of {{path, content}}")
    return msg


def handle_session(req: dict, ctx, read_next, answer) -> None:
    """Grades req's candidate and then `req["session"] - 1` more read with read_next(), each
    answered with answer(result) before the next one is read."""
    request_check.check(req, judge.REQUEST_SCHEMA)
    if req["isolation"] != "judge":
        raise request_check.RequestError("a judge session grades in the isolated judge only")
    total = req["session"]
    dirs: tuple[str, str, str] | None = None
    reaper = None
    template: warm.Template | _Cold = _COLD
    ctpl: cand_template.CandidateTemplate | None = None
    for index in range(total):
        if index > 0:
            msg = read_next()
            if msg == END:  # the host ends a session early (a lingering one: no more of this task)
                break
            msg = check_candidate(msg, index)
            req = {**req, "id": msg["id"], "candidate": msg["candidate"]}
        res = judge.new_result(req)
        res["syntax_errors"] = judge.syntax_errors(req["candidate"])
        if not res["syntax_errors"]:
            if dirs is None:
                dirs = judge.workspace(req, ctx, False)
                reaper = Reaper() if ctx.sandboxed else None
                if total > 1 and ctx.warm:
                    # The candidate template first (after the reaper, which must not hold its
                    # sockets): it imports the support modules while the judge template collects.
                    ctpl = _candidate_template(req, ctx)
                    template = warm.Template(req, ctx, dirs[0], dirs[2])
            try:
                judge.grade_in(
                    req,
                    ctx,
                    dirs[0],
                    dirs[1],
                    dirs[2],
                    res,
                    template if isinstance(template, warm.Template) and template.warm else None,
                    ctpl,
                )
            except Exception as e:  # noqa: BLE001  (this candidate gets no verdict; the session goes on)
                res["infra_error"] = f"{type(e).__name__}: {e}"
            if reaper is not None:
                reaper.kill_all(template.ns_pid if template.warm else 0)
            for d in (dirs[1], dirs[2], *(("/tmp", "/dev/shm") if ctx.sandboxed else ())):
                _empty(d)
        answer(res)
    if template.warm:
        template.close()
    if ctpl is not None:
        ctpl.close()


def _candidate_template(req: dict, ctx) -> "cand_template.CandidateTemplate | None":
    """A candidate template when the task's original main file imports support modules (else a
    cold candidate imports nothing of the task's anyway); None when it cannot be had."""
    modules = cand_template.imported_modules(req["original"], frozenset(judge.modules_of(req["support"])))
    if not modules or not ctx.candidate_template:
        return None
    try:
        return cand_template.CandidateTemplate(ctx.spawn, req, sorted(modules))
    except (RuntimeError, OSError, ValueError):
        return None
