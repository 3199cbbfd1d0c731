"""One grading request, judged: the supervisor of a judge process and its candidate process(es).

Runs in a fresh fork of the zygote that read this one request (and no other). In fresh
namespaces with a private tmpfs it writes the tests and the task's support files, asks the
candidate zygote for a candidate process (which gets the candidate's files and the support files,
never the tests or the reference), and forks the judge process: pytest, our plugins and the
tests, calling the candidate over a socket. It enforces the wall clock and the output caps,
replaces a candidate that timed out or died, and answers with what pytest's JUnit and our
plugin's stream recorded, both written on the judge's side only.
"""

import json
import os
import select
import selectors
import signal
import socket
import sys
import time
from typing import Any

from . import candidate as cand
from . import deaths, isolation, judge_plugin, request_check, wire
from .cand_template import PidFd
from .peer import Peer
from .pytest_config import judge_dirs, run_prepared
from .reap import kill, kill_and_wait
from .trusted_plugin import TrustedPlugin, module_name, read_junit, read_plugin_stream

BOX = "/box"
# Read once in the zygote, before it forks: every request is checked against it (unknown keys refused).
REQUEST_SCHEMA = request_check.load_schema()


def tail(buf: bytes, limit: int) -> str:
    return buf[-limit:].decode("utf-8", "replace")


def syntax_errors(files: list) -> list:
    out = []
    for f in files:
        try:
            compile(f["content"], f["path"], "exec", dont_inherit=True)
        except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
            out.append(f"{f['path']}: {type(e).__name__}: {e}")
    return out


class Capture:
    """Keeps the head and the tail of a stream within `cap` bytes and counts the rest."""

    def __init__(self, cap: int):
        self.cap, self.buf, self.total = cap, bytearray(), 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if len(self.buf) < self.cap:
            self.buf += chunk[: self.cap - len(self.buf)]
        else:
            self.buf = self.buf[-self.cap // 2 :] + chunk[-self.cap // 2 :]


def modules_of(files: list) -> list:
    return [module_name(f["path"]) for f in files if f["path"].endswith(".py")]


def spawn_candidate(spawn: socket.socket, req: dict, template=None) -> tuple:
    """A fresh candidate process: (pid or PidFd, channel fd, output fd). From a session's candidate
    template when there is one (cand_template.py), else from the candidate zygote."""
    if template is not None:
        pid, chan, out = template.spawn()
    else:
        spawn.send(json.dumps({"tmpfsMb": req["limits"]["tmpfsMb"]}).encode())
        ready, _, _ = select.select([spawn], [], [], 10)
        if not ready:
            raise RuntimeError("the candidate zygote did not answer")
        msg, fds, _flags, _addr = socket.recv_fds(spawn, 256, 2)
        if len(fds) != 2:
            raise RuntimeError("the candidate zygote sent no channel")
        pid = int(json.loads(msg)["pid"])
        chan, out = fds
    wire.send_frame(
        chan,
        {
            "files": req["candidate"] + req["support"],
            "private": modules_of(req["candidate"]),
            "shareable": modules_of(req["support"]),
            "limits": req["limits"],
            "addressSpaceLimit": bool(req.get("addressSpaceLimit")),
        },
    )
    return pid, chan, out


def new_result(req: dict) -> dict:
    return {
        "id": req["id"],
        "syntax_errors": [],
        "limit": None,
        "limit_detail": "",
        "infra_error": None,
        "exit_code": None,
        "signal": None,
        "junit": None,
        "plugin": None,
        "events": [],
        "stdout": "",
        "candidate_output": "",
        "output_truncated": False,
        "wall_ms": 0.0,
        "cpu_ms": None,
        "maxrss_kb": None,
        "isolation": req["isolation"],
        "candidate_restarts": 0,
        # How this candidate's judge process began: "collected" (it ran pytest's collection
        # itself) or "forked" (from a session's template that had collected the tests: warm.py).
        "judge_start": None,
        # How its candidate process began: "imported" (from the candidate zygote: it imports the
        # task's support modules itself) or "forked" (from a session's candidate template that had
        # imported them: cand_template.py); None in-process.
        "candidate_start": None,
    }


def workspace(req: dict, ctx, with_candidate: bool) -> tuple[str, str, str]:
    """Fresh namespaces and tmpfs for this request's judge processes; the tests and support files
    written once, read-only."""
    if ctx.sandboxed:
        isolation.enter_private_namespaces()
        isolation.private_scratch(BOX, req["limits"]["tmpfsMb"])
    ws, out, tmp = judge_dirs(ctx)
    for d in (ws, out, tmp):
        os.makedirs(d, exist_ok=True)
    cand.write_files(ws, req["support"] + req["tests"] + (req["candidate"] if with_candidate else []))
    if ctx.sandboxed:
        isolation.make_readonly(ws)  # tests and task files are pristine and stay so
    return ws, out, tmp


def handle(req: dict, ctx) -> dict:
    request_check.check(req, REQUEST_SCHEMA)
    res = new_result(req)
    res["syntax_errors"] = syntax_errors(req["candidate"])
    if res["syntax_errors"]:
        return res
    judged = req["isolation"] == "judge"
    ws, out, tmp = workspace(req, ctx, not judged)
    return grade_in(req, ctx, ws, out, tmp, res)


class ChildJudge:
    """A judge process of its own, forked here."""

    def __init__(self, pid: int):
        self.pid = pid

    def fileno(self):
        return None

    def poll(self):
        wpid, st, ru = os.wait4(self.pid, os.WNOHANG)
        return (st, ru) if wpid == self.pid else None

    def wait(self):
        _, st, ru = os.wait4(self.pid, 0)
        return st, ru

    def kill(self) -> None:
        kill(self.pid)


def _spawn(ctx, req: dict, res: dict, ctpl) -> tuple:
    """A candidate process, forked from the session's candidate template when it fits this
    candidate; cold after any failure of the template (which then stays cold)."""
    if ctpl is not None and ctpl.fits(req["candidate"]):
        try:
            c = spawn_candidate(ctx.spawn, req, ctpl)
            res["candidate_start"] = res["candidate_start"] or "forked"
            return c
        except (RuntimeError, OSError):
            pass
    c = spawn_candidate(ctx.spawn, req)
    res["candidate_start"] = res["candidate_start"] or "imported"
    return c


def grade_in(req: dict, ctx, ws: str, out: str, tmp: str, res: dict, template=None, ctpl=None) -> dict:
    """One candidate against the tests in the prepared workspace: its own candidate process and
    its own judge process, both forked before either sees anything of this candidate (the judge
    process from a session's warm template, when there is one: warm.py; the candidate process from
    its candidate template: cand_template.py)."""
    lim = req["limits"]
    judged = req["isolation"] == "judge"
    candidates = []
    if judged:
        candidates.append(_spawn(ctx, req, res, ctpl))
    ctl_judge, ctl_sup = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    rfd, wfd = os.pipe()
    t0 = time.monotonic()
    proc: ChildJudge | Any
    res["judge_start"] = "collected" if template is None else "forked"
    if template is not None:
        report_fd = os.open(
            os.path.join(out, "plugin.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600
        )
        try:
            proc = template.start(candidates[0][1], ctl_judge.fileno(), wfd, report_fd)
        finally:
            os.close(report_fd)
    else:
        pid = os.fork()
        if pid == 0:
            ctx.spawn.close()
            ctl_sup.close()
            os.close(rfd)
            chan = candidates[0][1] if candidates else -1
            for c in candidates:
                os.close(c[2])
            run_judge_process(req, ws, out, tmp, wfd, chan, ctl_judge, ctx)
        proc = ChildJudge(pid)
    os.close(wfd)
    ctl_judge.close()
    for c in candidates:
        os.close(c[1])
    judge_out, cand_out = Capture(lim["maxOutputBytes"]), Capture(lim["maxOutputBytes"])
    sel = selectors.DefaultSelector()
    sel.register(rfd, selectors.EVENT_READ, "judge")
    sel.register(ctl_sup, selectors.EVENT_READ, "ctl")
    for c in candidates:
        sel.register(c[2], selectors.EVENT_READ, "cand")
    if proc.fileno() is not None:
        sel.register(proc.fileno(), selectors.EVENT_READ, "proc")  # the template reports the end
    deadline = t0 + lim["wallTimeoutS"]
    status = rusage = None
    pipe_open = True
    started = False
    hard_cap = lim["maxOutputBytes"] * 64
    while True:
        if status is None:
            ended = proc.poll()
            if ended is not None:
                status, rusage = ended
                deadline = min(deadline, time.monotonic() + 0.5)  # drain what is left, briefly
        if status is not None and not pipe_open:
            break
        now = time.monotonic()
        if now >= deadline:
            if status is None:
                res["limit"], res["limit_detail"] = "timeout", f"wall clock exceeded {lim['wallTimeoutS']} s"
                proc.kill()
                deadline = float("inf")
                continue
            break
        for key, _ in sel.select(min(0.05, max(0.0, deadline - now))):
            if key.data == "proc":
                continue  # its end is read by proc.poll() above
            if key.data == "ctl":
                msg = ctl_sup.recv(16)
                if not msg:
                    sel.unregister(ctl_sup)
                    continue
                if msg == deaths.STARTED:
                    started = True
                    continue
                kill_and_wait([c[0] for c in candidates])
                try:
                    fresh = _spawn(ctx, req, res, ctpl)
                except (RuntimeError, OSError, wire.ChannelClosed):
                    ctl_sup.send(b"NO")
                    continue
                candidates.append(fresh)
                sel.register(fresh[2], selectors.EVENT_READ, "cand")
                socket.send_fds(ctl_sup, [b"OK"], [fresh[1]])
                os.close(fresh[1])
                res["candidate_restarts"] += 1
                continue
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fd)
                os.close(key.fd)
                if key.data == "judge":
                    pipe_open = False
                continue
            (judge_out if key.data == "judge" else cand_out).add(chunk)
            if judge_out.total + cand_out.total > hard_cap and res["limit"] is None:
                res["limit"], res["limit_detail"] = "resource_limit", f"output exceeded {hard_cap} bytes"
                proc.kill()
    kill_and_wait([c[0] for c in candidates])
    if status is None:
        proc.kill()
        status, rusage = proc.wait()
    res["wall_ms"] = (time.monotonic() - t0) * 1000
    res["stdout"], res["candidate_output"] = (
        tail(bytes(judge_out.buf), lim["maxOutputBytes"]),
        tail(bytes(cand_out.buf), lim["maxOutputBytes"]),
    )
    res["output_truncated"] = judge_out.total > lim["maxOutputBytes"] or cand_out.total > lim["maxOutputBytes"]
    if rusage is not None:
        res["cpu_ms"] = (rusage.ru_utime + rusage.ru_stime) * 1000
        res["maxrss_kb"] = rusage.ru_maxrss
    if os.WIFEXITED(status):
        res["exit_code"] = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        res["signal"] = signal.Signals(os.WTERMSIG(status)).name
    modules = {module_name(t["path"]): t["layer"] for t in req["tests"]}
    res["junit"] = read_junit(os.path.join(out, "junit.xml"), modules)
    res["plugin"], res["events"] = read_plugin_stream(os.path.join(out, "plugin.jsonl"))
    deaths.classify_end(res, status, started or deaths.drain_started(ctl_sup))
    # Every descriptor of this grade closed now, not when its object is collected: in a session the
    # next judge process is forked from this one, and a socket collected there would close
    # whatever descriptor then has its number.
    for key in list(sel.get_map().values()):
        if key.fileobj is not ctl_sup and key.data != "proc":
            os.close(key.fd)
    sel.close()
    ctl_sup.close()
    for c in candidates:
        if isinstance(c[0], PidFd):
            c[0].close()
    return res


def run_judge_process(req, ws, out, tmp, wfd, chan, ctl, ctx) -> None:
    """The judge process: pytest with the tests. Never returns."""
    lim = req["limits"]
    try:
        os.setsid()
        if ctx.sandboxed:
            isolation.set_dumpable(True)
            isolation.mount_proc()
        cand.set_limits(lim, ctx.sandboxed, bool(req.get("addressSpaceLimit")))
        report_fd = os.open(
            os.path.join(out, "plugin.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600
        )
        if ctx.sandboxed:
            isolation.drop_all_privileges()
        os.chdir(ws)
        cand.clean_env(tmp)
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        time.tzset()
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(wfd, 1)
        os.dup2(wfd, 2)
        keep = sorted({report_fd, chan, ctl.fileno()} - {-1})
        last = 2
        for fd in keep:
            os.closerange(last + 1, fd)
            last = fd
        os.closerange(last + 1, 65536)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = sys.stdout
        modules = {module_name(t["path"]): t["layer"] for t in req["tests"]}
        trusted = TrustedPlugin(report_fd, modules)
        plugins: list[object] = [trusted, deaths.StartMarker(ctl)]
        if req["isolation"] == "judge":
            private = frozenset(modules_of(req["candidate"]))
            peer = Peer(
                chan,
                judge=True,
                shareable=frozenset(modules_of(req["support"])),
                private=private,
                test_modules=frozenset(modules),
            )
            sources = {module_name(f["path"]): f["content"] for f in req["original"]}
            link = judge_plugin.CandidateLink(peer, ctl, report_fd, trusted.id_of)
            sys.meta_path.insert(
                0, judge_plugin.CandidateFinder(peer, judge_plugin.original_bindings(sources, private))
            )
            plugins.append(judge_plugin.JudgePlugin(link, lim["testTimeoutS"]))
        code = run_prepared(ctx.config, [t["path"] for t in req["tests"]], plugins)
        sys.stdout.flush()
        os._exit(int(code))
    except BaseException as e:  # noqa: BLE001  (report whatever it was, then die)
        try:
            os.write(2, f"judge: {type(e).__name__}: {e}\n".encode())
        finally:
            os._exit(deaths.JUDGE_FAILED)
