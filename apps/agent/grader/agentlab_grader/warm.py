"""A warm judge for a session: pytest configured and the tests collected once, forked per candidate.

The template is a judge process (same privileges dropped, same limits, same seccomp filter) that
runs pytest up to the test loop without any candidate: the candidate's module is a proxy whose
names are placeholders (`Lazy`) while the tests are collected. It then forks one judge process
per candidate, on the supervisor's word, before that process has seen anything of the candidate:
the child gets the candidate's channel, its own control socket, output pipe and report file, fills
each placeholder from the candidate (by name, under the per-test budget) and runs the test loop.
The template itself never talks to a candidate, so no judge process inherits another's state.

A collection that used the candidate (a module-level call, a base class, a placeholder kept
anywhere but a test module's globals) or failed at all cannot be shared: the template says
"cold" and every candidate is graded by a judge process of its own (judge.run_judge_process).
"""

import gc
import json
import os
import signal
import socket
import sys

import pytest

from . import judge_plugin


class Placeholders:
    def __init__(self):
        self.made: list = []
        self.used = False  # the collection needed a candidate's value
        self.active = True  # off in a child: the candidate's names are its own from then on


class Lazy:
    """A name of the candidate's module while the tests are collected: anything but an existence
    probe of pytest's collector (a private or dunder attribute) marks the collection as needing the
    candidate, and the template goes cold."""

    __slots__ = ("module", "name", "state")

    def __init__(self, module: str, name: str, state: Placeholders):
        object.__setattr__(self, "module", module)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "state", state)

    def __getattr__(self, name):
        if not name.startswith("_"):
            self.state.used = True
        raise AttributeError(name)

    def _use(self, *args, **kwargs):
        self.state.used = True
        raise RuntimeError("the tests used the candidate's module while they were collected")

    __call__ = __iter__ = __len__ = __getitem__ = __bool__ = __setattr__ = _use
    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = __add__ = __sub__ = __mul__ = __contains__ = _use
    __hash__ = object.__hash__


class WarmModule(judge_plugin.CandidateModule):
    def __getattr__(self, name):
        state = self.__dict__.get("_agentlab_lazy")
        if state is None or not state.active or name.startswith("__") or name in self.__dict__["_agentlab_imports"]:
            return super().__getattr__(name)
        lazy = Lazy(self.__name__, name, state)
        state.made.append(lazy)
        return lazy


class WarmFinder(judge_plugin.CandidateFinder):
    """Answers the candidate's modules without asking the candidate: a star import brings in what
    the task's original main file binds (a name the candidate lacks is removed when it is bound)."""

    def __init__(self, peer, bindings, state: Placeholders):
        super().__init__(peer, bindings)
        self.state = state

    def create_module(self, spec):
        return WarmModule(spec.name)

    def exec_module(self, module):
        star, imports = self.bindings[module.__name__]
        module.__dict__.update(_agentlab_peer=self.peer, _agentlab_imports=imports, _agentlab_lazy=self.state)
        module.__dict__["__all__"] = sorted(star)


def shareable(state: Placeholders, test_modules) -> bool:
    """Every placeholder is held by a test module's globals only (where the child replaces it)."""
    if state.used:
        return False
    homes = {id(vars(m)) for m in (sys.modules.get(n) for n in test_modules) if m is not None}
    for lazy in state.made:
        for ref in gc.get_referrers(lazy):
            if ref is state.made or type(ref).__name__ == "frame":
                continue
            if id(ref) not in homes:
                return False
    return True


class WarmPoint:
    """A pytest plugin of the template: at the test loop, serves forks; only children go on."""

    def __init__(self, cmd: socket.socket, state: Placeholders, test_modules, on_child):
        self.cmd, self.state, self.test_modules, self.on_child = cmd, state, test_modules, on_child

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session):
        if session.testsfailed or not shareable(self.state, self.test_modules):
            self.cmd.send(b"C")
            os._exit(0)
        fds = self._serve(session.config)
        self.state.active = False
        self.on_child(fds)
        capman = session.config.pluginmanager.getplugin("capturemanager")
        capman.start_global_capturing()  # on this child's own output, into files of its own
        capman.suspend_global_capture()
        return (yield)

    def pytest_collectreport(self, report):
        if report.failed:
            self.state.used = True  # a collection error is never shared: cold

    def _serve(self, config) -> list:
        sys.stdout.flush()
        capman = config.pluginmanager.getplugin("capturemanager")
        capman.stop_global_capturing()  # each child captures into files of its own
        self.cmd.send(b"W" + str(os.getpid()).encode())  # its pid in the session's PID namespace
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        while True:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(self.cmd, 16, 4)
            except OSError:
                os._exit(0)
            if msg != b"G" or len(fds) != 4:
                for fd in fds:
                    os.close(fd)
                if not msg:
                    os._exit(0)
                continue
            pid = os.fork()
            if pid == 0:
                self.cmd.close()
                return fds
            for fd in fds:
                os.close(fd)
            pidfd = os.pidfd_open(pid)
            socket.send_fds(self.cmd, [b"P"], [pidfd])
            os.close(pidfd)
            _, status, ru = os.wait4(pid, 0)
            self.cmd.send(json.dumps([status, ru.ru_utime + ru.ru_stime, ru.ru_maxrss]).encode())


def bind(test_modules: dict, link, budget_s: float) -> None:
    """In a child: every placeholder replaced by the candidate's value, or removed when the
    candidate has no such name (a test using it then fails as it would have failed to import)."""
    import time

    said: set = set()
    for modname in test_modules:
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        link.current = mod.__name__.replace(".", "/") + ".py"
        link.peer.deadline = time.monotonic() + budget_s
        for key, value in list(vars(mod).items()):
            if type(value) is not Lazy:
                continue
            source = sys.modules.get(value.module)
            try:
                if not isinstance(source, judge_plugin.CandidateModule):
                    raise ImportError(value.module)
                vars(mod)[key] = judge_plugin.CandidateModule.__getattr__(source, value.name)
            except BaseException as e:  # noqa: BLE001  (missing, broken or late: the name is not there)
                del vars(mod)[key]
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                if value.module not in said:  # why, once per module, in the judge's output (a cold
                    said.add(value.module)  # judge shows it as the tests' import error)
                    os.write(1, f"judge: {value.module}.{value.name}: {type(e).__name__}: {e}\n".encode()[:2000])
    link.current = ""


def run_template(req: dict, ws: str, tmp: str, cmd: socket.socket, ctx) -> None:
    """The template judge process (forked by the session's supervisor). Never returns; its
    children return from here into pytest's test loop and exit from it."""
    import time

    from . import candidate as cand
    from . import deaths, isolation
    from .judge import modules_of
    from .peer import Peer
    from .pytest_config import run_prepared
    from .trusted_plugin import TrustedPlugin, module_name

    lim = req["limits"]
    try:
        os.setsid()
        if ctx.sandboxed:
            isolation.set_dumpable(True)
            isolation.mount_proc()
        cand.set_limits(lim, ctx.sandboxed, bool(req.get("addressSpaceLimit")))
        if ctx.sandboxed:
            isolation.drop_all_privileges()
        os.chdir(ws)
        cand.clean_env(tmp)
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        time.tzset()
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        keep = cmd.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, 65536)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = sys.stdout
        modules = {module_name(t["path"]): t["layer"] for t in req["tests"]}
        trusted = TrustedPlugin(-1, modules)
        private = frozenset(modules_of(req["candidate"]))
        peer = Peer(
            -1,
            judge=True,
            shareable=frozenset(modules_of(req["support"])),
            private=private,
            test_modules=frozenset(modules),
        )
        sources = {module_name(f["path"]): f["content"] for f in req["original"]}
        link = judge_plugin.CandidateLink(peer, cmd, -1, trusted.id_of)  # its control socket: the child's, set there
        state = Placeholders()
        sys.meta_path.insert(0, WarmFinder(peer, judge_plugin.original_bindings(sources, private), state))

        def on_child(fds: list) -> None:
            chan, ctl_fd, wfd, report_fd = fds
            os.dup2(wfd, 1)
            os.dup2(wfd, 2)
            os.close(wfd)
            ctl = socket.socket(fileno=ctl_fd)
            # Before anything of the candidate reaches this process (as StartMarker does in a
            # judge process of its own): from here on its death is the candidate's doing.
            if ctl.send(deaths.STARTED) != len(deaths.STARTED):
                raise OSError("the start mark was not sent")
            trusted.fd = link.report_fd = report_fd
            link.ctl = ctl
            peer.rebind(chan)
            bind(modules, link, lim["testTimeoutS"])

        plugins = [
            trusted,
            judge_plugin.JudgePlugin(link, lim["testTimeoutS"]),
            WarmPoint(cmd, state, modules, on_child),
        ]
        code = run_prepared(ctx.config, [t["path"] for t in req["tests"]], plugins)
        sys.stdout.flush()
        os._exit(int(code))
    except BaseException as e:  # noqa: BLE001  (report whatever it was, then die)
        try:
            os.write(2, f"judge: {type(e).__name__}: {e}\n".encode())
        finally:
            os._exit(deaths.JUDGE_FAILED)


class Rusage:
    def __init__(self, cpu_s: float, maxrss: int):
        self.ru_utime, self.ru_stime, self.ru_maxrss = cpu_s, 0.0, maxrss


class WarmChild:
    """A judge process forked by the template: killed through its pidfd; its end (wait status,
    CPU, peak memory) is reported by the template, which is its parent."""

    def __init__(self, cmd: socket.socket, pidfd: int):
        self.cmd, self.pidfd = cmd, pidfd

    def fileno(self) -> int:
        return self.cmd.fileno()

    def _end(self, flags: int):
        try:
            msg = self.cmd.recv(256, flags)
        except (BlockingIOError, InterruptedError):
            return None
        os.close(self.pidfd)
        self.pidfd = -1
        if not msg:
            raise RuntimeError("the warm judge template is gone")
        status, cpu, maxrss = json.loads(msg)
        return int(status), Rusage(float(cpu), int(maxrss))

    def poll(self):
        return self._end(socket.MSG_DONTWAIT)

    def wait(self):
        return self._end(0)

    def kill(self) -> None:
        if self.pidfd >= 0:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Template:
    """The supervisor's side of the template: started once per session; `warm` when the tests
    could be collected without the candidate."""

    def __init__(self, req: dict, ctx, ws: str, tmp: str):
        import select

        self.cmd, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            ctx.spawn.close()
            self.cmd.close()
            run_template(req, ws, tmp, theirs, ctx)
        theirs.close()
        self.warm, self.ns_pid = False, 0
        ready, _, _ = select.select([self.cmd], [], [], req["limits"]["wallTimeoutS"])
        msg = self.cmd.recv(64) if ready else b""
        if msg.startswith(b"W") and msg[1:].isdigit():
            self.warm, self.ns_pid = True, int(msg[1:])
        else:
            self.close()

    def start(self, chan: int, ctl: int, wfd: int, report_fd: int) -> WarmChild:
        socket.send_fds(self.cmd, [b"G"], [chan, ctl, wfd, report_fd])
        msg, fds, _flags, _addr = socket.recv_fds(self.cmd, 16, 1)
        if msg != b"P" or len(fds) != 1:
            raise RuntimeError("the warm judge template did not start a judge process")
        return WarmChild(self.cmd, fds[0])

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        self.cmd.close()
        self.warm = False
