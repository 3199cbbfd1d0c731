import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import pino from "pino";
import { formatAnswer, type GrpoItemVerdict, type JobPayload, type TaskSpec } from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { makeGradeBatchHandler } from "../../apps/agent/src/jobs/grade-batch";
import { gradeCompletions } from "../../apps/agent/src/jobs/grpo-reward";
import type { JobContext } from "../../apps/agent/src/jobs/types";

// The grpo reward path with the real grader (bwrap, the isolated judge): the trainer's completions
// are parsed and graded like any grade-batch, and a completion carrying one of the judge's own
// attack cases earns no reward and shows in the audit. Positive control: the reference passes.

const task: TaskSpec = {
  id: "g1",
  source_group: "g",
  language: "python",
  instruction: "Fix f.",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: "def f(x):\n    return x\n" }],
  public_tests: [
    { path: "test_public.py", content: "from solution import f\n\ndef test_t():\n    assert isinstance(f(1), int)\n" },
  ],
  hidden_tests: [
    { path: "test_hidden.py", content: "from solution import f\n\ndef test_v():\n    assert f(1) == 2\n" },
  ],
  reference: [{ path: "solution.py", content: "def f(x):\n    return x + 1\n" }],
};
const answer = (content: string) => formatAnswer([{ path: "solution.py", content }]);
// The candidate ends the process that runs the tests, as a forger would to skip the hidden ones.
const EXIT_120 = "import os\n\ndef f(x):\n    os._exit(120)\n    return x + 1\n";
// Patching pytest from the candidate: in the judge the tests run in another process, so it does nothing.
const PATCH_PYTEST =
  "try:\n    import _pytest.python as p\n    p.Function.runtest = lambda self: None\nexcept Exception:\n    pass\n\ndef f(x):\n    return x\n";

let grader: Grader;
const ctx = (): JobContext => {
  const log = pino({ level: "warn" });
  const ac = new AbortController();
  return {
    jobId: "j",
    attemptId: "a",
    earlierArtifacts: [],
    attempt: 1,
    type: "grpo",
    payload: {},
    signal: ac.signal,
    abortReason: () => null,
    log,
    emitLog: () => {},
    progress: () => {},
    uploadArtifact: async () => "",
    workDir: "/tmp",
    agent: {
      serverUrl: "",
      credential: "",
      stateDir: "/tmp",
      python: null,
      sandboxBackend: "bwrap",
      sandboxOk: true,
    },
  };
};

beforeAll(() => {
  grader = new Grader(
    {
      backend: "bwrap",
      graderDir: join(process.cwd(), "apps/agent/grader"),
      uid: 65534,
      gid: 65534,
      scratchDir: "/tmp/agentlab-test-scratch",
    },
    { workers: 1, limits: { wallTimeoutS: 20, testTimeoutS: 5, memoryMb: 256, pids: 48 } },
  );
});
afterAll(() => grader?.close());

describe("grpo rewards from the isolated judge", () => {
  it("grades each completion; attacks earn 0, and the in-process kill is counted as tampered", async () => {
    type Task = JobPayload<"grpo">["tasks"][number];
    // the same task admitted for in-process grading (the weaker mode), where the candidate shares the judge's process
    const inProcess = { ...task, id: "g2" };
    const tasks = new Map<string, Task>([
      [task.id, { task, part: "train", isolation: "judge", limits: {} }],
      [inProcess.id, { task: inProcess, part: "train", isolation: "in_process", limits: {} }],
    ]);
    const items = [
      answer(task.reference[0]?.content ?? ""),
      answer("def f(x):\n    return x - 1\n"),
      "no code block here",
      answer(EXIT_120),
      answer(PATCH_PYTEST),
    ]
      .map((completion) => ({ task_id: task.id, completion }))
      .concat([{ task_id: inProcess.id, completion: answer(EXIT_120) }]);
    const gradeBatch = makeGradeBatchHandler(grader, new ReferenceIds(grader));
    const verdicts: GrpoItemVerdict[] = await gradeCompletions(ctx(), gradeBatch, tasks, { id: 0, step: 1, items });
    const got = verdicts.map((v) => v.verdict);
    const why = JSON.stringify(verdicts);
    expect(got[0], why).toBe("pass"); // positive control: the reference earns reward 1
    expect(got[1]).toBe("fail_hidden");
    expect(got[2]).toBe("unparseable");
    // In the judge the attacks reach nothing: killing the test process or patching pytest is a failure.
    expect(got[3]).toMatch(/^fail_/);
    expect(got[4]).toMatch(/^fail_/);
    // Where the candidate shares the judge's process, the same kill is evidence: tampered.
    expect(got[5]).toBe("tampered");
    // reward = 1 only for pass: the attacks get 0; the audit counts the tampered one
    expect(got.filter((v) => v === "pass")).toHaveLength(1);
    expect(got.filter((v) => v === "tampered")).toHaveLength(1);
  }, 180_000);
});
