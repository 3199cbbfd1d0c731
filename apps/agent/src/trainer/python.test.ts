import { existsSync } from "node:fs";
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrainerEvent } from "@agentlab/core";
import { findPython, findVllmPython, pythonDoctor, runPython, TrainerRunError } from "./python";

// A real (small) python module named agentlab_trainer, put first on the child's path via cwd: it
// behaves according to FAKE_MODE (the spec itself must be a valid one: runPython parses it before
// writing), so runPython is exercised against a real process tree.
const FAKE_TRAINER = String.raw`
import json, os, signal, subprocess, sys, time
args = sys.argv[1:]
spec = json.load(open(args[args.index("--spec") + 1]))
kind = args[0]
def emit(**e):
    sys.stdout.write(json.dumps(e) + "\n"); sys.stdout.flush()
mode = os.environ["FAKE_MODE"]
if mode == "ok":
    print("a human line on stdout", flush=True)
    emit(event="log", level="info", message="spec:" + json.dumps(spec, sort_keys=True))
    emit(event="progress", step=1, total_steps=2, epoch=1, epoch_progress=0.5, loss=1.5, lr=0.001, tokens_per_s=10.0, eta_s=1.0, memory_mb=12.0)
    print("stderr line", file=sys.stderr, flush=True)
    emit(event="result", command=kind, status="succeeded")
elif mode == "user_error":
    emit(event="result", command=kind, status="failed", error={"kind": "user_error", "message": "pre-flight refused dataset"})
    sys.exit(3)
elif mode == "crash":
    print("Traceback: boom", file=sys.stderr, flush=True)
    sys.exit(1)
elif mode == "bad_event":
    emit(event="progress", step="one")
    sys.exit(0)
elif mode == "orphan":
    # like torchrun and its ranks when their launcher is killed: a grandchild holding the pipes
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    open(os.environ["FAKE_PID_FILE"], "w").write(str(child.pid))
    os.kill(os.getpid(), signal.SIGKILL)
elif mode in ("cancel", "stubborn"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    open(os.environ["FAKE_PID_FILE"], "w").write(str(child.pid))
    if mode == "cancel":
        def on_term(signum, frame):
            emit(event="result", command=kind, status="canceled", error={"kind": "canceled", "message": "canceled by signal"})
            sys.exit(143)
        signal.signal(signal.SIGTERM, on_term)
    else:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    emit(event="progress", step=1, total_steps=100, epoch=1, epoch_progress=0.01, loss=2.0, lr=0.001, tokens_per_s=5.0, eta_s=99.0, memory_mb=12.0)
    time.sleep(120)
`;

let dir = "";
const python = "python3";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "runpython-test-"));
  await mkdir(join(dir, "agentlab_trainer"));
  await writeFile(join(dir, "agentlab_trainer", "__init__.py"), "");
  await writeFile(join(dir, "agentlab_trainer", "__main__.py"), FAKE_TRAINER);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

const TRAIN = { base_model: "m", dataset: "/d.jsonl", output_dir: "/o" };
const fake = (mode: string, pidFile = "") => ({ ...process.env, FAKE_MODE: mode, FAKE_PID_FILE: pidFile });

describe("runPython", () => {
  it("passes the spec, parses events, routes other lines to the log, returns the result", async () => {
    const events: TrainerEvent[] = [];
    const logs: string[] = [];
    const spec = { output_dir: "/x", corpus: ["a.txt"] };
    const result = await runPython("tiny-model", spec, {
      python,
      cwd: dir,
      env: fake("ok"),
      onEvent: (e) => events.push(e),
      log: (s, l) => logs.push(`${s}:${l}`),
    });
    expect(result).toMatchObject({ event: "result", command: "tiny-model", status: "succeeded" });
    expect(events.map((e) => e.event)).toEqual(["log", "progress", "result"]);
    const logEvent = events[0];
    // The file carries the parsed spec: the caller's keys and every default (Python copies none).
    expect(logEvent?.event === "log" && JSON.parse(logEvent.message.slice(5))).toMatchObject({
      corpus: ["a.txt"],
      output_dir: "/x",
      vocab_size: 2048,
      arch: "llama",
      force: false,
    });
    expect(logs).toContain("stdout:a human line on stdout");
    expect(logs).toContain("stderr:stderr line");
    const progress = events[1];
    expect(progress?.event === "progress" && progress.loss).toBe(1.5);
  });

  it("throws a user_error with the trainer's message on exit 3", async () => {
    const err = await runPython("train", TRAIN, { python, cwd: dir, env: fake("user_error") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TrainerRunError);
    const e = err as TrainerRunError;
    expect(e.reason).toBe("user_error");
    expect(e.exitCode).toBe(3);
    expect(e.message).toContain("pre-flight refused dataset");
    expect(e.result?.status).toBe("failed");
  });

  it("throws an internal_error with the stderr tail when there is no result", async () => {
    const e = (await runPython("train", TRAIN, { python, cwd: dir, env: fake("crash") }).catch(
      (x: unknown) => x,
    )) as TrainerRunError;
    expect(e.reason).toBe("internal_error");
    expect(e.exitCode).toBe(1);
    expect(e.stderrTail).toContain("Traceback: boom");
  });

  it("does not accept events that break the schema", async () => {
    const logs: string[] = [];
    const e = (await runPython("train", TRAIN, {
      python,
      cwd: dir,
      env: fake("bad_event"),
      log: (_s, l) => logs.push(l),
    }).catch((x: unknown) => x)) as TrainerRunError;
    expect(e).toBeInstanceOf(TrainerRunError);
    expect(e.message).toContain("does not match the trainer schema");
    expect(logs.some((l) => l.startsWith("[unparsed event]"))).toBe(true);
  });

  it("cancels with SIGTERM to the whole process group", async () => {
    const pidFile = join(dir, "cancel.pid");
    const ac = new AbortController();
    const run = runPython("train", TRAIN, {
      python,
      cwd: dir,
      env: fake("cancel", pidFile),
      signal: ac.signal,
      graceMs: 5000,
      onEvent: (ev) => {
        if (ev.event === "progress") ac.abort();
      },
    });
    const e = (await run.catch((x: unknown) => x)) as TrainerRunError;
    expect(e.reason).toBe("canceled");
    expect(e.exitCode).toBe(143);
    expect(e.result?.status).toBe("canceled");
    const grandchild = Number(await readFile(pidFile, "utf8"));
    await waitFor(() => !alive(grandchild));
  });

  it("escalates to SIGKILL after the grace period when SIGTERM is ignored", async () => {
    const pidFile = join(dir, "stubborn.pid");
    const ac = new AbortController();
    const started = Date.now();
    const run = runPython("train", TRAIN, {
      python,
      cwd: dir,
      env: fake("stubborn", pidFile),
      signal: ac.signal,
      graceMs: 300,
      onEvent: (ev) => {
        if (ev.event === "progress") ac.abort();
      },
    });
    const e = (await run.catch((x: unknown) => x)) as TrainerRunError;
    expect(e.reason).toBe("canceled");
    expect(e.signal).toBe("SIGKILL");
    expect(Date.now() - started).toBeLessThan(20_000);
    const grandchild = Number(await readFile(pidFile, "utf8"));
    await waitFor(() => !alive(grandchild));
  });

  it("kills what is left of the group when the trainer dies, instead of waiting on the pipes it held", async () => {
    const pidFile = join(dir, "orphan.pid");
    const started = Date.now();
    const e = (await runPython("train", TRAIN, { python, cwd: dir, env: fake("orphan", pidFile) }).catch(
      (x: unknown) => x,
    )) as TrainerRunError;
    expect(e).toBeInstanceOf(TrainerRunError);
    expect(e.reason).toBe("internal_error");
    expect(e.signal).toBe("SIGKILL");
    // the grandchild sleeps 120 s with stdout and stderr open: only killing it ends the run early
    expect(Date.now() - started).toBeLessThan(60_000);
    const grandchild = Number(await readFile(pidFile, "utf8"));
    await waitFor(() => !alive(grandchild));
  });

  it("refuses a spec with a key the trainer does not know before starting it; the same spec without it runs", async () => {
    const typo = await runPython("train", { ...TRAIN, learning_rat: 1 } as never, {
      python,
      cwd: dir,
      env: fake("ok"),
    }).catch((e: unknown) => e);
    expect(typo).toBeInstanceOf(TrainerRunError);
    expect((typo as TrainerRunError).reason).toBe("user_error");
    expect((typo as TrainerRunError).message).toContain("learning_rat");
    await expect(runPython("train", TRAIN, { python, cwd: dir, env: fake("ok") })).resolves.toMatchObject({
      status: "succeeded",
    });
  });

  it("refuses to start when already aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(runPython("train", TRAIN, { python, cwd: dir, env: fake("ok"), signal: ac.signal })).rejects.toThrow(
      /canceled before start/,
    );
  });
});

describe("findPython and pythonDoctor", () => {
  it("prefers the configured interpreter, else the venv", () => {
    expect(findPython("/opt/py/bin/python")).toBe("/opt/py/bin/python");
    expect(findPython(undefined, { root: "/nonexistent" })).toBe("python3");
  });

  it("finds the vLLM venv only where it exists (a configured path, else python/vllm/.venv)", async () => {
    const root = await mkdtemp(join(tmpdir(), "agentlab-vllm-venv-"));
    try {
      expect(findVllmPython(undefined, { root })).toBeNull();
      expect(findVllmPython(join(root, "nope", "python"), { root })).toBeNull();
      const bin = join(root, "python", "vllm", ".venv", "bin");
      await mkdir(bin, { recursive: true });
      await writeFile(join(bin, "python"), "");
      expect(findVllmPython(undefined, { root })).toBe(join(bin, "python")); // positive control
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("reports versions, null for missing packages", async () => {
    const d = await pythonDoctor(python);
    expect(d.error).toBeUndefined();
    expect(d.python).toMatch(/^3\.\d+\.\d+$/);
    expect(d.vllm === null || typeof d.vllm === "string").toBe(true);
  });

  it("reports an error for a missing interpreter", async () => {
    const d = await pythonDoctor("/nonexistent/python");
    expect(d.python).toBeNull();
    expect(d.error).toBeTruthy();
  });

  const venv = findPython();
  it.skipIf(!existsSync(venv) || !venv.includes(".venv"))(
    "sees torch 2.13.0 and transformers in the trainer venv",
    async () => {
      const d = await pythonDoctor(venv);
      expect(d.torch).toMatch(/^2\.13\.0/);
      expect(d.transformers).not.toBeNull();
      expect(d.peft).not.toBeNull();
      expect(d.agentlabTrainer).toBe("0.1.0");
    },
    120_000,
  );
});
