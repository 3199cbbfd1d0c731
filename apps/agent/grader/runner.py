"""Grading zygote: imports pytest once, then grades one candidate per request line on stdin.

Started (inside bwrap, or bare for the `process` backend) as
    python -s -P runner.py --mode sandbox|process --ini pytest.ini
Each request forks a supervisor (trusted) which, in sandbox mode, enters fresh mount/PID/IPC
namespaces with a private tmpfs, writes the workspace, makes it read-only and forks the candidate
process (PID 1 of its namespace, no capabilities, rlimits). The supervisor enforces the wall
clock and output caps, then reads JUnit + the trusted plugin's stream and answers one JSON line.
Forking a pre-imported interpreter is what makes grading fast: pytest's import dominated.
"""
import argparse
import json
import os
import resource
import selectors
import shutil
import signal
import sys
import time

import pytest  # noqa: F401  (pre-imported once for every candidate)
import _pytest.config
import _pytest.junitxml
import _pytest.python
import _pytest.runner
import _pytest.terminal
import _pytest.capture
import _pytest.fixtures
import _pytest.assertion.rewrite
import _pytest.skipping
import _pytest.logging
import _pytest.tmpdir
import _pytest.monkeypatch
import _pytest.warnings

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # -P left our own dir out; last, so tasks win
import nsjail  # noqa: E402
from trusted_plugin import TrustedPlugin, module_name, read_junit, read_plugin_stream

BOX = "/box"


def tail(buf: bytes, limit: int) -> str:
    return buf[-limit:].decode("utf-8", "replace")


def write_files(root: str, files: list) -> None:
    for f in files:
        path = os.path.normpath(os.path.join(root, f["path"]))
        if not path.startswith(root + "/"):
            raise ValueError(f"path escapes the workspace: {f['path']}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f["content"])


def syntax_errors(files: list) -> list:
    out = []
    for f in files:
        try:
            compile(f["content"], f["path"], "exec", dont_inherit=True)
        except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
            out.append(f"{f['path']}: {type(e).__name__}: {e}")
    return out


def candidate(req: dict, ws: str, out: str, tmp: str, sandboxed: bool, ini: str, wfd: int) -> None:
    """Runs in the candidate process; never returns."""
    lim = req["limits"]
    try:
        if sandboxed:
            os.setsid()  # process groups span PID namespaces: kill(0) must not reach the zygote
            nsjail.set_dumpable(True)
            nsjail.mount_proc()
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # python ignores it; a huge file must kill
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGXFSZ])
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")  # under memory pressure the candidate dies, not the zygote
        resource.setrlimit(resource.RLIMIT_CPU, (lim["cpuSeconds"], lim["cpuSeconds"] + 1))
        fsize = lim["tmpfsMb"] << 19  # half the tmpfs: a huge file dies of SIGXFSZ, not ENOSPC
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (lim["openFiles"], lim["openFiles"]))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if req.get("addressSpaceLimit"):
            mem = (lim["memoryMb"] + 256) << 20
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        plugin_fd = os.open(os.path.join(out, "plugin.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        if sandboxed:
            nsjail.drop_all_privileges()
        os.chdir(ws)
        os.environ.clear()
        os.environ.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONHASHSEED": "0", "TZ": "UTC",
                           "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"})
        time.tzset()
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)  # never the zygote's stdin: it carries other candidates' requests
        os.dup2(wfd, 1)
        os.dup2(wfd, 2)
        os.closerange(3, plugin_fd)
        os.closerange(plugin_fd + 1, 65536)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = sys.stdout
        modules = {module_name(t["path"]): t["layer"] for t in req["tests"]}
        args = ["-c", ini, "--rootdir", ws, "--noconftest", "-p", "no:cacheprovider", "-p", "no:stepwise",
                "--junitxml", os.path.join(out, "junit.xml"), "--continue-on-collection-errors",
                "-q", "--basetemp", os.path.join(tmp, "pytest"), *[t["path"] for t in req["tests"]]]
        code = pytest.main(args, plugins=[TrustedPlugin(plugin_fd, modules)])
        sys.stdout.flush()
        os._exit(int(code))
    except BaseException as e:  # noqa: BLE001  (report whatever it was, then die)
        try:
            os.write(2, f"runner: {type(e).__name__}: {e}\n".encode())
        finally:
            os._exit(120)


def supervise(req: dict, sandboxed: bool, ini: str, base: str) -> dict:
    lim = req["limits"]
    res = {"id": req["id"], "syntax_errors": [], "limit": None, "limit_detail": "", "infra_error": None,
           "exit_code": None, "signal": None, "junit": None, "plugin": None, "stdout": "", "output_truncated": False,
           "wall_ms": 0.0, "cpu_ms": None, "maxrss_kb": None}
    res["syntax_errors"] = syntax_errors(req["candidate"])
    if res["syntax_errors"]:
        return res
    root = BOX if sandboxed else base
    if sandboxed:
        nsjail.enter_private_namespaces()
        nsjail.mount_tmpfs(BOX, lim["tmpfsMb"])
        nsjail.mount_tmpfs("/tmp", 1)
        nsjail.mount_tmpfs("/dev/shm", 1)
    ws, out, tmp = (os.path.join(root, d) for d in ("ws", "out", "tmp"))
    for d in (ws, out, tmp):
        os.makedirs(d, exist_ok=True)
    os.chmod(tmp, 0o777)
    write_files(ws, req["files"] + req["tests"])
    if sandboxed:
        nsjail.make_readonly(ws)  # tests and task files are pristine and stay so
    rfd, wfd = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        if not sandboxed:
            os.setsid()
        candidate(req, ws, out, tmp, sandboxed, ini, wfd)
    os.close(wfd)
    deadline = t0 + lim["wallTimeoutS"]
    cap, hard_cap = lim["maxOutputBytes"], lim["maxOutputBytes"] * 64
    head, total, status, rusage = bytearray(), 0, None, None
    sel = selectors.DefaultSelector()
    sel.register(rfd, selectors.EVENT_READ)
    open_pipe, grace = True, False
    while True:
        if status is None:
            wpid, st, ru = os.wait4(pid, os.WNOHANG)
            if wpid == pid:
                status, rusage = st, ru
        if status is not None and not open_pipe:
            break
        now = time.monotonic()
        if now >= deadline and status is None:
            res["limit"], res["limit_detail"] = "timeout", f"wall clock exceeded {lim['wallTimeoutS']} s"
            kill_tree(pid, sandboxed)
            deadline = float("inf")
        if status is not None and open_pipe and now >= deadline:
            break  # a leftover process holds the pipe open after the candidate exited
        if not open_pipe:
            time.sleep(0.002)  # output closed, exit imminent: poll the status briefly
            continue
        for _key, _ in sel.select(min(0.05, max(0.0, deadline - now))):
            chunk = os.read(rfd, 65536)
            if not chunk:
                sel.unregister(rfd)
                open_pipe = False
                break
            total += len(chunk)
            if len(head) < cap:
                head += chunk[: cap - len(head)]
            else:
                head = head[-cap // 2:] + chunk[-cap // 2:]
            if total > hard_cap and res["limit"] is None:
                res["limit"], res["limit_detail"] = "resource_limit", f"output exceeded {hard_cap} bytes"
                kill_tree(pid, sandboxed)
        if status is not None and open_pipe and not grace:
            grace, deadline = True, min(deadline, time.monotonic() + 0.5)
    if not sandboxed:
        kill_tree(pid, sandboxed)  # the candidate's process group: detached helpers die here
    res["wall_ms"] = (time.monotonic() - t0) * 1000
    res["stdout"], res["output_truncated"] = tail(bytes(head), cap), total > cap
    if rusage is not None:
        res["cpu_ms"] = (rusage.ru_utime + rusage.ru_stime) * 1000
        res["maxrss_kb"] = rusage.ru_maxrss
    if status is not None:
        if os.WIFEXITED(status):
            res["exit_code"] = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            res["signal"] = signal.Signals(sig).name
            if res["limit"] is None and sig in (signal.SIGXCPU, signal.SIGXFSZ, signal.SIGKILL, signal.SIGSEGV):
                res["limit"] = "resource_limit"
                res["limit_detail"] = f"killed by {res['signal']} (cpu, file size or memory limit)"
    modules = {module_name(t["path"]): t["layer"] for t in req["tests"]}
    res["junit"] = read_junit(os.path.join(out, "junit.xml"), modules)
    res["plugin"] = read_plugin_stream(os.path.join(out, "plugin.jsonl"))
    if not sandboxed:
        shutil.rmtree(base, ignore_errors=True)
    if res["limit"] is None and res["exit_code"] == 120:
        res["infra_error"] = "runner failed before pytest started: " + res["stdout"][-300:]
    return res


def kill_tree(pid: int, sandboxed: bool) -> None:
    try:
        if sandboxed:
            os.kill(pid, signal.SIGKILL)  # PID 1 of its namespace: the kernel kills the rest
        else:
            os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def warm_up(ini: str, scratch: str) -> None:
    """One throw-away session in the zygote so that lazy imports, regex caches and plugin
    hook tables exist before the first fork; everything it added to the interpreter is undone."""
    d = os.path.join(scratch, "warmup")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "test_warm.py"), "w") as f:
        f.write("import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_w(x, tmp_path):\n    assert x == 2\n")
    saved = (list(sys.path), list(sys.meta_path), set(sys.modules), sys.stdout)
    sys.stdout = open(os.devnull, "w")
    try:
        pytest.main(["-c", ini, "--rootdir", d, "--noconftest", "-p", "no:cacheprovider", "-q",
                     "--junitxml", os.path.join(d, "junit.xml"), "--basetemp", os.path.join(d, "bt"), d])
    finally:
        sys.stdout.close()
        sys.path[:], sys.meta_path[:], sys.stdout = saved[0], saved[1], saved[3]
        for name in set(sys.modules) - saved[2]:
            if getattr(sys.modules[name], "__file__", "") and sys.modules[name].__file__.startswith(d):
                del sys.modules[name]
        shutil.rmtree(d, ignore_errors=True)


def serve(args) -> None:
    sandboxed = args.mode == "sandbox"
    warm_up(args.ini, args.scratch or "/tmp")
    if sandboxed:
        nsjail.set_dumpable(False)
    out = sys.stdout.buffer
    out.write((json.dumps({"ready": True, "pid": os.getpid(), "caps": nsjail.effective_caps()}) + "\n").encode())
    out.flush()
    for line in sys.stdin.buffer:
        req = json.loads(line)
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            code = 0
            try:
                base = os.path.join(args.scratch, req["id"]) if args.scratch else ""
                res = supervise(req, sandboxed, args.ini, base)
            except BaseException as e:  # noqa: BLE001
                res, code = {"id": req["id"], "infra_error": f"{type(e).__name__}: {e}"}, 1
            data = (json.dumps(res) + "\n").encode()
            while data:
                data = data[os.write(wfd, data):]
            os._exit(code)
        os.close(wfd)
        chunks = []
        while chunk := os.read(rfd, 1 << 20):
            chunks.append(chunk)
        os.close(rfd)
        os.waitpid(pid, 0)
        body = b"".join(chunks).strip()
        if not body:
            body = json.dumps({"id": req["id"], "runner_lost": True}).encode()
        out.write(body + b"\n")
        out.flush()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["sandbox", "process"], required=True)
    p.add_argument("--ini", required=True)
    p.add_argument("--scratch", default="")
    serve(p.parse_args())
