"""A candidate template for a session: the task's support modules imported once, forked per candidate.

A cold candidate process (candidate.py) is forked from the candidate zygote and imports the task's
support modules itself (a `limits.py` its main file imports), once per candidate. In a session the
supervisor may instead ask the zygote for a template: the zygote forks it *before* it receives
anything (fork before read), and the template then gets the task's support files only — never a
candidate's file, the tests or the reference, which never leave the judge's side — writes them in
its own tmpfs and imports the support modules the task's original main file imports. Each
candidate's process is forked from it, so one candidate's changes to a module (a global, a
patched function) die with that candidate's process: the next one is a fresh fork.

Each candidate still gets everything candidate.py gives it: its own mount, PID, IPC and network
namespaces, its own tmpfs with its files and the support files at the same paths (so the modules'
`__file__` stay true), its limits, no capabilities, no_new_privs and the seccomp filter. To make
those namespaces the template keeps CAP_SYS_ADMIN of the sandbox's user namespace while support
modules run (task code, which the threat model trusts to mean what it says; candidate code never
runs there), so it is hemmed in first: its own mount, PID, IPC, network and UTS namespaces and
its own /proc, no_new_privs, the seccomp filter, not dumpable, only its two sockets open, and no
thread or process of the imports left running beside it (else: cold). It is PID 1 of its
namespace: when the session closes its sockets it exits and every process it forked dies with it.
What stays open (docs/grading.md): a hostile support module could, while it imports, unmount its
/proc cover (the sandbox's /proc beneath is locked, not gone) and read what a same-uid dumpable
process shows there, such as the running judge's workspace; the task's author already has it.

The supervisor forks a candidate from it only when that is the same as a cold start
(`CandidateTemplate.fits`): the candidate's main files import every pre-imported support module
(so their import side effects would happen anyway), and no module the template loaded has the
name of one of the candidate's modules (a candidate shipping its own `limits.py` or `decimal.py`
gets its own file). Otherwise, or when the template failed or is late, the candidate is cold.
"""

import ast
import importlib
import json
import os
import select
import signal
import socket
import sys
import time

from . import candidate as cand
from . import isolation, wire
from .trusted_plugin import module_name

# How long after it was asked for the template may take to import (it overlaps the judge
# template's collection); later, or failed, and every candidate of the session goes cold.
READY_S = 5.0


def imported_modules(files: list, support: frozenset) -> set[str]:
    """The support modules the import statements of `files` name (anywhere in the file; relative
    imports resolved against the file's package)."""
    out: set[str] = set()
    for f in files:
        if not f["path"].endswith(".py"):
            continue
        try:
            tree = ast.parse(f["content"])
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        package = module_name(f["path"]).split(".")[:-1]
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                if node.level and len(base) != len(package) - node.level + 1:
                    continue  # beyond the top package: an import error either way
                mod = ".".join(base + ([node.module] if node.module else []))
                names = [mod] + [f"{mod}.{a.name}" if mod else a.name for a in node.names]
            out.update(n for n in names if n in support)
    return out


# -- the zygote's side ------------------------------------------------------------------------------


def template_supervisor(spawn: socket.socket, sandboxed: bool, scratch: str, tmpfs_mb: int) -> None:
    """Forked by the candidate zygote on a template request. Never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    cmd_sup, cmd_tpl = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    data_sup, data_tpl = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    root = cand.BOX
    if sandboxed:
        isolation.enter_private_namespaces(uts=True)
        isolation.private_scratch(cand.BOX, tmpfs_mb)
    else:
        root = os.path.join(scratch, f"ctpl-{os.getpid()}")
        os.makedirs(root, exist_ok=True)
    pid = os.fork()
    if pid == 0:
        spawn.close()
        cmd_sup.close()
        data_sup.close()
        _template_main(cmd_tpl, data_tpl, root, sandboxed, scratch, tmpfs_mb)
    pidfd = os.pidfd_open(pid)  # its own child, not yet reaped: the pidfd is this process's for sure
    socket.send_fds(spawn, [b"T"], [cmd_sup.fileno(), data_sup.fileno(), pidfd])
    for s in (spawn, cmd_sup, cmd_tpl, data_sup, data_tpl):
        s.close()
    os.close(pidfd)
    os.waitpid(pid, 0)
    if not sandboxed:
        import shutil

        shutil.rmtree(root, ignore_errors=True)
    os._exit(0)


def _template_main(cmd: socket.socket, data: socket.socket, root: str, sandboxed: bool, scratch: str, mb: int):
    try:
        isolation.die_with_parent()
        os.setsid()
        if sandboxed:
            isolation.mount_proc()  # its own PID namespace's (the sandbox's is locked beneath: see below)
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        init = wire.recv_frame(data.fileno(), time.monotonic() + READY_S)
        ws, tmp = os.path.join(root, "ws"), os.path.join(root, "tmp")
        os.makedirs(ws, exist_ok=True)
        os.makedirs(tmp, exist_ok=True)
        cand.write_files(ws, init["support"])
        if sandboxed:
            isolation.make_readonly(ws)
        # Not RLIMIT_NPROC: the template forks each candidate's supervisor (candidate.py sets it there).
        cand.set_limits(init["limits"], False, init["addressSpaceLimit"])
        if sandboxed:
            isolation.restrict_keeping_caps()
        keep = sorted((cmd.fileno(), data.fileno()))
        os.closerange(3, keep[0])
        os.closerange(keep[0] + 1, keep[1])
        os.closerange(keep[1] + 1, 65536)
        os.chdir(ws)
        cand.clean_env(tmp)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = sys.stdout
        sys.path.insert(0, ws)
        before = set(sys.modules)
        for name in init["modules"]:
            importlib.import_module(name)
        _alone()
        wire.send_frame(data.fileno(), {"loaded": sorted(set(sys.modules) - before)})
    except BaseException as e:  # noqa: BLE001  (a template that cannot import: every candidate goes cold)
        try:
            wire.send_frame(data.fileno(), {"cold": f"{type(e).__name__}: {e}"[:500]})
        finally:
            os._exit(1)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # candidates' supervisors, reaped by the kernel
    while True:
        try:
            msg = cmd.recv(16)
        except OSError:
            os._exit(0)
        if not msg:
            os._exit(0)  # the session is over: PID 1 of its namespace, it takes every candidate along
        if msg == b"S" and os.fork() == 0:
            try:
                _candidate_supervisor(cmd, data, sandboxed, scratch, mb, ws)
            finally:
                os._exit(1)


def _alone() -> None:
    """Refuses (cold) a template whose imports left a thread or another process running: nothing
    of the task's code may run beside the template's loop while it holds CAP_SYS_ADMIN."""
    if len(os.listdir("/proc/self/task")) != 1:
        raise RuntimeError("a support module left a thread running")
    if os.getpid() == 1 and any(n.isdigit() and n != "1" for n in os.listdir("/proc")):
        raise RuntimeError("a support module left a process running")


def _candidate_supervisor(cmd, data, sandboxed: bool, scratch: str, tmpfs_mb: int, template_ws: str) -> None:
    """As candidate._candidate_supervisor, forked from the template: the candidate's own namespaces
    and tmpfs, and a pidfd for the session (its pid means nothing outside the template's namespace)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    data.close()
    chan_judge, chan_cand = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    out_r, out_w = os.pipe()
    root = cand.BOX
    if sandboxed:
        isolation.enter_private_namespaces()
        isolation.private_scratch(cand.BOX, tmpfs_mb)  # covers the template's: its files are written afresh
    else:
        root = os.path.join(scratch, f"cand-{os.getpid()}")
        os.makedirs(root, exist_ok=True)
        sys.path[:] = [p for p in sys.path if p != template_ws]
    pid = os.fork()
    if pid == 0:
        cmd.close()
        chan_judge.close()
        os.close(out_r)
        cand._candidate_main(chan_cand.detach(), out_w, root, sandboxed)
    pidfd = os.pidfd_open(pid)
    socket.send_fds(cmd, [b"P"], [chan_judge.fileno(), out_r, pidfd])
    for s in (cmd, chan_judge, chan_cand):
        s.close()
    for fd in (out_r, out_w, pidfd):
        os.close(fd)
    os.waitpid(pid, 0)
    if not sandboxed:
        import shutil

        shutil.rmtree(root, ignore_errors=True)
    os._exit(0)


# -- the session supervisor's side ------------------------------------------------------------------


class PidFd:
    """A candidate process known by its pidfd (reap.kill_and_wait takes these as well as pids)."""

    def __init__(self, fd: int):
        self.fd = fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class CandidateTemplate:
    """Asked of the candidate zygote when a session starts; `fits` says whether a candidate may be
    forked from it, `spawn` forks one."""

    def __init__(self, spawn: socket.socket, req: dict, modules: list[str]):
        self.modules, self.failed = frozenset(modules), False
        self.loaded: frozenset[str] = frozenset()
        self.deadline = time.monotonic() + min(READY_S, req["limits"]["wallTimeoutS"])
        spawn.send(json.dumps({"tmpfsMb": req["limits"]["tmpfsMb"], "template": True}).encode())
        ready, _, _ = select.select([spawn], [], [], 10)
        if not ready:
            raise RuntimeError("the candidate zygote did not answer")
        msg, fds, _flags, _addr = socket.recv_fds(spawn, 16, 3)
        if msg != b"T" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            raise RuntimeError("the candidate zygote sent no template")
        self.cmd, self.data = socket.socket(fileno=fds[0]), socket.socket(fileno=fds[1])
        self.pidfd = fds[2]
        self.ready: bool | None = None
        wire.send_frame(
            self.data.fileno(),
            {
                "support": req["support"],
                "modules": sorted(self.modules),
                "limits": req["limits"],
                "addressSpaceLimit": bool(req.get("addressSpaceLimit")),
            },
        )

    def _wait_ready(self) -> bool:
        if self.ready is None:
            try:
                msg = wire.recv_frame(self.data.fileno(), self.deadline)
                self.loaded = frozenset(msg.get("loaded") or ())
                self.ready = "loaded" in msg
            except (wire.FrameTimeout, wire.ChannelClosed, wire.ProtocolError, OSError, AttributeError):
                self.ready = False
            if not self.ready:
                self.close()
        return self.ready and not self.failed

    def fits(self, files: list) -> bool:
        """Forking this candidate from the template is what a cold start would give it."""
        from .judge import modules_of

        own = modules_of(files)
        shadowed = any(m == n or n.startswith(m + ".") for m in own for n in self.loaded)
        return self._wait_ready() and not shadowed and self.modules <= imported_modules(files, self.modules)

    def spawn(self) -> tuple:
        """(PidFd, channel fd, output fd) of a candidate process forked from the template."""
        try:
            self.cmd.send(b"S")
            ready, _, _ = select.select([self.cmd], [], [], 10)
            if not ready:
                raise RuntimeError("the candidate template did not answer")
            msg, fds, _flags, _addr = socket.recv_fds(self.cmd, 16, 3)
            if msg != b"P" or len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                raise RuntimeError("the candidate template sent no candidate")
        except (OSError, RuntimeError):
            self.failed = True  # the rest of the session is cold
            self.close()
            raise
        chan, out, pidfd = fds
        return PidFd(pidfd), chan, out

    def close(self) -> None:
        """Ends the template and every candidate it forked, and waits until they are gone (they
        count against the sandbox's process limit the next request forks under)."""
        if self.pidfd < 0:
            return
        self.cmd.close()
        self.data.close()
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass
        select.select([self.pidfd], [], [], 5.0)
        os.close(self.pidfd)
        self.pidfd = -1
