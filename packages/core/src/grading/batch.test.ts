import { describe, expect, it } from "vitest";
import { parseJobPayload } from "../jobs/contracts";
import { taskFingerprint } from "../tasks/fingerprint";
import type { TaskSpec } from "../tasks/spec";
import {
  batchItemOutcomes,
  gradeBatchId,
  gradeBatchMaxDurationS,
  gradeBatchPayloads,
  gradePayloadOfItem,
  type GradeBatchInput,
} from "./batch";
import { GRADE_BATCH_MAX_ITEMS } from "./schemas";

const task = (n: number): TaskSpec => ({
  id: `t/${n}`,
  source_group: "t",
  language: "python",
  instruction: `Fix f${n}.`,
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: `def f():\n    return ${n}\n` }],
  public_tests: [],
  hidden_tests: [{ path: "test_h.py", content: `from solution import f\n\ndef test():\n    assert f() == ${n + 1}\n` }],
  reference: [{ path: "solution.py", content: `def f():\n    return ${n + 1}\n` }],
});
const tasks = [task(0), task(1), task(2)];
const item = (i: number, t = tasks[i % 3]): GradeBatchInput => ({
  key: `c${String(i).padStart(3, "0")}`,
  task: t ?? task(0),
  candidate: [{ path: "solution.py", content: `# ${i}\n` }],
  isolation: "judge",
});
const graded = (key: string) => ({
  key,
  status: "graded",
  grade: {
    verdict: "pass",
    backend: "bwrap",
    isolation: "judge",
    unsandboxed: false,
    graderVersion: "g",
    reasons: [],
    tests: [],
    ignoredCandidatePaths: [],
    exitCode: 0,
    signal: null,
    stdoutTail: "",
    stderrTail: "",
    candidateOutputTail: "",
    wallTimeMs: 1,
    cpuTimeMs: 1,
    peakMemoryKb: 1,
    expectedTestIds: ["test_h::test"],
  },
});

describe("grade-batch payloads", () => {
  it("carry each task once however many items grade it, cut at 64 items", () => {
    const items = Array.from({ length: 130 }, (_, i) => item(i));
    const payloads = gradeBatchPayloads(items);
    expect(payloads.map((p) => p.items.length)).toEqual([64, 64, 2]);
    expect(payloads[0]?.tasks.map((t) => t.task.id)).toEqual(["t/0", "t/1", "t/2"]);
    expect(payloads[2]?.tasks.map((t) => t.fingerprint)).toEqual([taskFingerprint(task(2)), taskFingerprint(task(0))]);
    // 64 candidates of one task: one copy of the task in the payload.
    const one = gradeBatchPayloads(Array.from({ length: 64 }, (_, i) => item(i, tasks[0])));
    expect(one[0]?.tasks).toHaveLength(1);
    for (const p of payloads) expect(parseJobPayload("grade-batch", p).ok).toBe(true);
  });

  it("are refused with the field named: a wrong fingerprint, an unknown task, a key twice, an unused task, too many items", () => {
    const [p] = gradeBatchPayloads([item(0), item(1)]);
    if (!p) throw new Error("no payload");
    expect(parseJobPayload("grade-batch", p).ok).toBe(true); // positive control
    const errorOf = (payload: unknown) => {
      const r = parseJobPayload("grade-batch", payload);
      return r.ok ? "accepted" : r.error;
    };
    const t0 = p.tasks[0];
    const i0 = p.items[0];
    if (!t0 || !i0) throw new Error("empty payload");
    expect(errorOf({ ...p, tasks: [{ ...t0, task: task(7) }, ...p.tasks.slice(1)] })).toMatch(
      /not the fingerprint of task t\/7[\s\S]*tasks\[0\]\.fingerprint/,
    );
    expect(errorOf({ ...p, items: [{ ...i0, task: "0".repeat(64) }, ...p.items.slice(1)] })).toMatch(
      /names no task of the batch[\s\S]*items\[0\]\.task/,
    );
    expect(errorOf({ ...p, items: [i0, { ...i0 }, ...p.items.slice(1)] })).toMatch(/item key c000 used twice/);
    expect(errorOf({ ...p, items: [i0] })).toMatch(/task t\/1 is graded by no item/);
    const many = Array.from({ length: GRADE_BATCH_MAX_ITEMS + 1 }, (_, i) => ({ ...i0, key: `k${i}` }));
    expect(errorOf({ tasks: [t0], items: many })).toMatch(/items/);
    expect(errorOf({ ...p, extra: 1 })).toMatch(/extra/);
  });

  it("name a batch by its item keys, whatever their order", () => {
    expect(gradeBatchId(["b", "a"])).toBe(gradeBatchId(["a", "b"]));
    expect(gradeBatchId(["a", "b"])).not.toBe(gradeBatchId(["a", "c"]));
  });

  it("give back one item as the single grade payload it is retried as", () => {
    const [p] = gradeBatchPayloads([item(0), item(1)]);
    if (!p) throw new Error("no payload");
    const single = gradePayloadOfItem(p, "c001");
    expect(single?.task.id).toBe("t/1");
    expect(single?.candidate).toEqual([{ path: "solution.py", content: "# 1\n" }]);
    expect(parseJobPayload("grade", single).ok).toBe(true);
    expect(gradePayloadOfItem(p, "nope")).toBeNull();
  });

  it("allow every item and reference its wall limit twice", () => {
    const [p] = gradeBatchPayloads([item(0), { ...item(1), limits: { wallTimeoutS: 100 } }]);
    if (!p) throw new Error("no payload");
    expect(gradeBatchMaxDurationS(p)).toBe(300 + 2 * 10 + 2 * 100 + 2 * (2 * 10));
  });
});

describe("batch item outcomes", () => {
  it("read each item's verdict; an item without one, or any item of a failed batch it did not grade, is an error", () => {
    const keys = ["a", "b", "c"];
    const ok = batchItemOutcomes(
      {
        state: "succeeded",
        result: {
          items: [
            graded("a"),
            { key: "b", status: "error", reason: "infra_error", error: "sandbox vanished", grade: null },
          ],
        },
        error: null,
      },
      keys,
    );
    expect(ok.get("a")?.status).toBe("graded");
    expect(ok.get("b")).toEqual({ status: "error", error: "infra_error: sandbox vanished" });
    expect(ok.get("c")).toEqual({ status: "error", error: "the batch's result has no entry for this item" });
    // An interrupted batch: what it graded counts, the rest are errors with the job's reason.
    const partial = batchItemOutcomes(
      { state: "failed", result: { items: [graded("a")] }, error: "agent shut down" },
      keys,
    );
    expect(partial.get("a")?.status).toBe("graded");
    expect(partial.get("b")).toEqual({ status: "error", error: "grade batch failed: agent shut down" });
    // A result that breaks the contract grades nothing (an infra_error is never a verdict).
    const bad = batchItemOutcomes(
      {
        state: "succeeded",
        result: { items: [{ ...graded("a"), grade: { ...graded("a").grade, verdict: "infra_error" } }] },
        error: null,
      },
      keys,
    );
    expect(bad.get("a")).toEqual({ status: "error", error: "the batch's result does not match its contract" });
  });
});
