import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { decideVerdict, type GradeResult, type GradingIsolation, type TaskSpec } from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { probeTask, sandboxCfg } from "./helpers/judge";

// A candidate must not be able to choose "no verdict": a grade that ends in infra_error is retried
// and then left out of every count, so a model whose wrong answers crash the grader would lose
// nothing. Once pytest's session has started, every death of the judge process is the candidate's
// failure (`tampered`); the agent's own abort stays infra_error. Each probe's positive control:
// the raw evidence (the wait status the supervisor saw) really is a judge death, and the same
// evidence without the start mark — the previous rule — is infra_error.

const RUN = randomBytes(5).toString("hex");
const TASK = probeTask(`deaths-${RUN}`, `hidden-marker-${randomBytes(6).toString("hex")}`);
const LIMITS = { wallTimeoutS: 8, testTimeoutS: 3, memoryMb: 256, pids: 48 };
// Dies while the first test runs (at call time, not import time, so collection is over).
const dying = (how: string) => `import os\n\ndef f(x):\n    ${how}\n    return x + 1\n`;
const ABORT = dying("os.abort()");
const EXIT_120 = dying("os._exit(120)");
// Makes pytest's JUnit report unwritable: its directory read-only (the session then raises at its end).
const NO_JUNIT = [
  "import gc, os",
  "for o in gc.get_objects():",
  "    if type(o).__name__ == 'LogXML':",
  "        try:", // the warm-up session's LogXML may survive too: its folder is gone
  "            os.chmod(os.path.dirname(os.path.abspath(o.logfile)), 0o500)",
  "        except OSError:",
  "            pass",
  "",
  "def f(x):",
  "    return x + 1 if x == 1 else x",
  "",
].join("\n");

type Mode = { name: string; grader: () => Grader; isolation: GradingIsolation };
let bwrap: Grader;
let processBackend: Grader;
const ids = new Map<string, string[]>();
beforeAll(() => {
  bwrap = new Grader(sandboxCfg(), { workers: 1, limits: LIMITS });
  processBackend = new Grader(sandboxCfg({ backend: "process", scratchDir: "/tmp/agentlab-test-scratch-process" }), {
    workers: 1,
    limits: LIMITS,
  });
});
afterAll(() => {
  bwrap.close();
  processBackend.close();
});

async function grade(m: Mode, task: TaskSpec, content: string): Promise<GradeResult> {
  const key = `${m.name}:${task.id}`;
  let want = ids.get(key);
  if (!want) {
    const ref = await m.grader().referenceIds(task, undefined, { isolation: m.isolation });
    expect(ref.result.verdict, ref.result.reasons.join("; ")).toBe("pass");
    want = ref.ids;
    ids.set(key, want);
  }
  return m.grader().grade(task, [{ path: "solution.py", content }], { expectedIds: want, isolation: m.isolation });
}

/** The verdict the same wait status got before the start mark existed: a signal or exit 120 was infra. */
function oldRule(r: GradeResult): string {
  const infra = r.signal
    ? `the judge process was interrupted by ${r.signal}`
    : r.exitCode === 120
      ? "the judge failed before pytest started"
      : null;
  return decideVerdict({
    infraError: infra,
    syntaxErrors: [],
    limit: null,
    limitDetail: "",
    runnerLost: false,
    exitCode: r.exitCode,
    junit: null,
    plugin: null,
    canaryId: "x",
    expectedIds: null,
  }).verdict;
}

const inProcessModes: Mode[] = [
  { name: "in_process (bwrap)", grader: () => bwrap, isolation: "in_process" },
  { name: "in_process (process backend)", grader: () => processBackend, isolation: "in_process" },
];

describe("a candidate cannot choose infra_error", () => {
  it("in_process (process backend): os.abort() in a test is tampered (the old rule: infra_error)", async () => {
    const m = inProcessModes[1];
    if (!m) throw new Error("no mode");
    const r = await grade(m, TASK, ABORT);
    expect(r.signal, "the probe really killed the judge process").toBe("SIGABRT");
    expect(oldRule(r), "positive control: the previous rule made this death a no-verdict").toBe("infra_error");
    expect(r.verdict, r.reasons.join("; ")).toBe("tampered");
    expect(r.reasons.join(" ")).toContain("after pytest started");
  });
  it("in_process (bwrap): os.abort() in a test is a failure, never infra_error", async () => {
    // The judge is its PID namespace's init there, which its own SIGABRT cannot kill: glibc's
    // abort() then ends it with SIGSEGV, a limit verdict (the candidate's failure too).
    const m = inProcessModes[0];
    if (!m) throw new Error("no mode");
    const r = await grade(m, TASK, ABORT);
    expect(r.signal, "the probe really killed the judge process").toMatch(/^SIG(ABRT|SEGV)$/);
    expect(["tampered", "resource_limit"], r.reasons.join("; ")).toContain(r.verdict);
  });
  for (const m of inProcessModes) {
    it(`${m.name}: exit 120 from a test is tampered (the old rule: infra_error)`, async () => {
      const r = await grade(m, TASK, EXIT_120);
      expect(r.exitCode).toBe(120);
      expect(oldRule(r), "positive control").toBe("infra_error");
      expect(r.verdict, r.reasons.join("; ")).toBe("tampered");
    });
  }
  it("in_process (bwrap): an unwritable JUnit report is tampered (the old rule: infra_error)", async () => {
    const m = inProcessModes[0];
    if (!m) throw new Error("no mode");
    const r = await grade(m, TASK, NO_JUNIT);
    expect(r.exitCode, r.stdoutTail.slice(-500)).toBe(120);
    expect(oldRule(r), "positive control").toBe("infra_error");
    expect(r.verdict, r.reasons.join("; ")).toBe("tampered");
  });
  it("judge: os.abort() in the candidate process fails the test that called it", async () => {
    const r = await grade({ name: "judge", grader: () => bwrap, isolation: "judge" }, TASK, ABORT);
    expect(r.verdict, r.reasons.join("; ")).toBe("fail_public");
  });
  it("the reference still passes in every mode after those deaths (the sandbox recovered)", async () => {
    for (const m of [...inProcessModes, { name: "judge", grader: () => bwrap, isolation: "judge" as const }])
      expect((await grade(m, TASK, TASK.reference[0]?.content ?? "")).verdict, m.name).toBe("pass");
  });
  it("the agent's own abort stays infra_error (requeued, never judged)", async () => {
    const ac = new AbortController();
    const pending = bwrap.grade(TASK, [{ path: "solution.py", content: "import time\ntime.sleep(30)\n" }], {
      expectedIds: ids.get(`in_process (bwrap):${TASK.id}`) ?? null,
      isolation: "in_process",
      signal: ac.signal,
    });
    setTimeout(() => ac.abort("shutdown"), 300);
    const r = await pending;
    expect(r.verdict).toBe("infra_error");
    expect(r.reasons.join(" ")).toContain("interrupted");
  });
});
