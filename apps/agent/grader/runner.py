"""Grading zygote: a warm python with pytest imported that grades one request at a time.

Started (inside bwrap, or bare for the `process` backend) as
    python -s -P runner.py --mode sandbox|process --ini pytest.ini
Before it reads anything it forks the candidate zygote (agentlab_grader/candidate.py), which will fork every
candidate process; per request it forks a fresh supervisor BEFORE the request is read, and only
that child reads it (agentlab_grader/judge.py), so neither zygote's memory ever holds a task's tests or reference.
Requests arrive on stdin as `<length>\\n<json>`; each answer is one JSON line on stdout.
Forking a pre-imported interpreter is what makes grading fast: pytest's import dominates.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import sys

import pytest

# -P left our own dir out; appended last. Our modules live in one package (agentlab_grader), so no
# task file can shadow them or be shadowed by them.
sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from agentlab_grader import candidate, isolation, judge, pytest_config, session  # noqa: E402

# Signals an operator or a service manager sends to the whole process tree (`systemctl kill`,
# drain with SIGUSR2) must never change a verdict: the agent alone stops a grade, with SIGKILL.
IGNORED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGQUIT)


class Context:
    def __init__(self, sandboxed: bool, ini: str, scratch: str, spawn: socket.socket):
        self.sandboxed, self.ini, self.scratch, self.spawn = sandboxed, ini, scratch, spawn
        self.config = None  # pytest's parsed configuration, shared by every request (pytest_config.prepare_config)
        self.warm = True  # sessions collect the tests once, in a template judge (agentlab_grader/warm.py)
        # and import the task's support modules once, in a candidate template (cand_template.py)
        self.candidate_template = True


def read_request(fd: int):
    header = b""
    while not header.endswith(b"\n"):
        b = os.read(fd, 1)
        if not b:
            return None
        header += b
        if len(header) > 20:
            raise ValueError("malformed request header")
    n = int(header)
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise ValueError("request cut short")
        chunks.append(chunk)
        left -= len(chunk)
    return json.loads(b"".join(chunks))


def answer(res: dict) -> None:
    data = (json.dumps(res) + "\n").encode()
    while data:
        data = data[os.write(1, data) :]


def serve_one(ctx: Context, done_w: int) -> None:
    """The per-request supervisor (a fresh fork). Never returns."""
    code = 0
    req = None
    try:
        req = read_request(0)
        if req is None:
            os._exit(3)
        if req.get("session") is not None:
            session.handle_session(req, ctx, lambda: read_request(0), answer)
            res = None
        else:
            res = judge.handle(req, ctx)
    except BaseException as e:  # noqa: BLE001
        # In a session this answer's id is the session's first: the host sees an answer for
        # another candidate and replaces the sandbox.
        res, code = {"id": (req or {}).get("id", ""), "infra_error": f"{type(e).__name__}: {e}"}, 1
    if res is not None:
        answer(res)
    os.write(done_w, b"1")
    if not ctx.sandboxed and req:
        for d in pytest_config.judge_dirs(ctx):
            shutil.rmtree(d, ignore_errors=True)
    os._exit(code)


def warm_up(ini: str, scratch: str) -> None:
    """One throw-away session so that lazy imports, regex caches and plugin hook tables exist
    before the first fork; the modules it imported from its scratch directory are dropped."""
    d = os.path.join(scratch, "warmup")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "test_warm.py"), "w") as f:
        f.write("import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_w(x, tmp_path):\n    assert x == 2\n")
    saved = (list(sys.path), list(sys.meta_path), set(sys.modules), sys.stdout)
    sys.stdout = open(os.devnull, "w")
    try:
        pytest.main(
            [
                "-c",
                ini,
                "--rootdir",
                d,
                "--noconftest",
                "-p",
                "no:cacheprovider",
                "-q",
                "--junitxml",
                os.path.join(d, "junit.xml"),
                "--basetemp",
                os.path.join(d, "bt"),
                d,
            ]
        )
    finally:
        sys.stdout.close()
        sys.path[:], sys.meta_path[:], sys.stdout = saved[0], saved[1], saved[3]
        for name in set(sys.modules) - saved[2]:
            if (getattr(sys.modules[name], "__file__", "") or "").startswith(d):
                del sys.modules[name]
        shutil.rmtree(d, ignore_errors=True)


def serve(args) -> None:
    sandboxed = args.mode == "sandbox"
    for s in IGNORED:
        signal.signal(s, signal.SIG_IGN)
    warm_up(args.ini, args.scratch or "/tmp")
    spawn_judge, spawn_cand = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    if os.fork() == 0:
        spawn_judge.close()
        os.close(0)
        if sandboxed:  # what it forks (a candidate template, with capabilities) must not read it
            isolation.set_dumpable(False)
        candidate.candidate_zygote(spawn_cand, sandboxed, args.scratch)
    spawn_cand.close()
    if sandboxed:
        isolation.set_dumpable(False)
    ctx = Context(sandboxed, args.ini, args.scratch, spawn_judge)
    ctx.candidate_template = not args.no_candidate_template
    ctx.config = pytest_config.prepare_config(ctx)  # after the candidate zygote left: it never holds pytest's state
    ready: dict | None = {"ready": True, "pid": os.getpid(), "caps": isolation.effective_caps(), "protocol": 2}
    while True:
        done_r, done_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(done_r)
            serve_one(ctx, done_w)
        os.close(done_w)
        if ready:  # after the first supervisor exists: the host's process baseline includes it
            sys.stdout.buffer.write((json.dumps(ready) + "\n").encode())
            sys.stdout.buffer.flush()
            ready = None
        answered = os.read(done_r, 1)
        os.close(done_r)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3:
            return  # stdin closed: the agent is done with this sandbox
        if not answered:
            sys.stdout.buffer.write((json.dumps({"runner_lost": True}) + "\n").encode())
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["sandbox", "process"], required=True)
    p.add_argument("--ini", required=True)
    p.add_argument("--scratch", default="")
    # Every candidate cold (the comparison for tests and measurements of the candidate template).
    p.add_argument("--no-candidate-template", action="store_true")
    serve(p.parse_args())
