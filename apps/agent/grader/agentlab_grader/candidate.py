"""The candidate process: the model's module(s) and nothing secret, serving the judge's calls.

Forked from the candidate zygote, which never reads a request, so nothing of another task lives
in this process's memory. Its workspace holds the candidate's main files and the task's public
support files only: hidden tests and the reference never enter. It answers the judge over one
socket (peer.py) and never reports a test result: what it says are values, not verdicts.
"""

import importlib
import json
import os
import resource
import signal
import socket
import sys

from . import isolation, wire
from .peer import Peer

BOX = "/box"


def write_files(root: str, files: list) -> None:
    for f in files:
        path = os.path.normpath(os.path.join(root, f["path"]))
        if not path.startswith(root + "/"):
            raise ValueError(f"path escapes the workspace: {f['path']}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f["content"])


def set_limits(lim: dict, sandboxed: bool, address_space: bool) -> None:
    """rlimits every graded process gets; RLIMIT_NPROC counts this sandbox's user namespace only,
    so it bounds processes even where no pids cgroup could be made."""
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # python ignores it; a huge file must kill
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGXFSZ])
    resource.setrlimit(resource.RLIMIT_CPU, (lim["cpuSeconds"], lim["cpuSeconds"] + 1))
    fsize = lim["tmpfsMb"] << 19  # half the tmpfs: a huge file dies of SIGXFSZ, not ENOSPC
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NOFILE, (lim["openFiles"], lim["openFiles"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sandboxed:
        resource.setrlimit(resource.RLIMIT_NPROC, (lim["pids"], lim["pids"]))
    if address_space:
        mem = (lim["memoryMb"] + 256) << 20
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))


def clean_env(home: str) -> None:
    os.environ.clear()
    os.environ.update(
        {"PYTHONHASHSEED": "0", "TZ": "UTC", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}
    )


def candidate_zygote(spawn: socket.socket, sandboxed: bool, scratch: str) -> None:
    """Forks one candidate (or a session's candidate template) per message, which says only the
    tmpfs size; holds no request data, ever. Never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    while True:
        try:
            cmd = spawn.recv(256)
        except OSError:
            os._exit(0)
        if not cmd:
            os._exit(0)
        try:
            ask = json.loads(cmd)
            tmpfs_mb = max(1, min(4096, int(ask["tmpfsMb"])))
            template = ask.get("template") is True
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if os.fork() == 0:
            try:
                if template:  # a session's candidate template (cand_template.py), forked before it reads
                    from . import cand_template

                    cand_template.template_supervisor(spawn, sandboxed, scratch, tmpfs_mb)
                _candidate_supervisor(spawn, sandboxed, scratch, tmpfs_mb)
            finally:
                os._exit(1)


def _candidate_supervisor(spawn: socket.socket, sandboxed: bool, scratch: str, tmpfs_mb: int) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    chan_judge, chan_cand = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    out_r, out_w = os.pipe()
    root = BOX
    if sandboxed:
        isolation.enter_private_namespaces()
        isolation.private_scratch(BOX, tmpfs_mb)
    else:
        root = os.path.join(scratch, f"cand-{os.getpid()}")
        os.makedirs(root, exist_ok=True)
    pid = os.fork()
    if pid == 0:
        spawn.close()
        chan_judge.close()
        os.close(out_r)
        _candidate_main(chan_cand.detach(), out_w, root, sandboxed)
    socket.send_fds(spawn, [json.dumps({"pid": pid}).encode()], [chan_judge.fileno(), out_r])
    spawn.close()
    chan_judge.close()
    chan_cand.close()
    os.close(out_r)
    os.close(out_w)
    os.waitpid(pid, 0)
    if not sandboxed:
        import shutil

        shutil.rmtree(root, ignore_errors=True)
    os._exit(0)


def _candidate_main(chan: int, out_w: int, root: str, sandboxed: bool) -> None:
    code = 0
    try:
        isolation.die_with_parent()
        if sandboxed:
            os.setsid()
            isolation.set_dumpable(True)
            isolation.mount_proc()
        else:
            os.setsid()
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        init = wire.recv_frame(chan)
        ws, tmp = os.path.join(root, "ws"), os.path.join(root, "tmp")
        os.makedirs(ws, exist_ok=True)
        os.makedirs(tmp, exist_ok=True)
        write_files(ws, init["files"])
        importlib.invalidate_caches()  # forked from a candidate template: its view of /box/ws is not this one
        if sandboxed:
            isolation.make_readonly(ws)  # its own code and the support files stay as written
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")  # under memory pressure the candidate dies, never the judge
        set_limits(init["limits"], sandboxed, init["addressSpaceLimit"])
        if sandboxed:
            isolation.drop_all_privileges()
        os.closerange(3, chan)
        os.closerange(chan + 1, 65536)
        os.chdir(ws)
        clean_env(tmp)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = sys.stdout
        sys.path.insert(0, ws)
        private = frozenset(init["private"])
        peer = Peer(chan, judge=False, shareable=frozenset(init["shareable"]), private=private)

        def resolve(module: str, name: str):
            if module not in private:
                raise ImportError(f"{module} is not a candidate module")
            mod = importlib.import_module(module)
            return mod if name == "" else getattr(mod, name)

        peer.resolve_named = resolve
        peer.serve_forever()
    except BaseException as e:  # noqa: BLE001  (a broken channel ends the candidate, nothing more)
        code = 1
        try:
            os.write(2, f"candidate: {type(e).__name__}: {e}\n".encode())
        except OSError:
            pass
    os._exit(code)
