import { describe, expect, it } from "vitest";
import { auditOutcome } from "./sync";
import { auditDedupeKey, nextRound } from "./enqueue";

const params = { graderVersion: "g/1", sandbox: "bwrap", referenceRuns: 3, maxMutants: 60 };
const task = {
  fingerprint: "f".repeat(64),
  reference: [{ path: "solution.py", content: "x = 1\n" }],
  inProcessReason: null,
};

describe("audit enqueue rules", () => {
  it("audits a task once per grader unless asked again; an errored audit is retried", () => {
    expect(nextRound({ round: null, latest: null }, false)).toBe(0);
    expect(nextRound({ round: 0, latest: "passed" }, false)).toBeNull();
    expect(nextRound({ round: 2, latest: "pending" }, false)).toBeNull();
    expect(nextRound({ round: 0, latest: "failed" }, true)).toBe(1);
    expect(nextRound({ round: 1, latest: "error" }, false)).toBe(2);
  });

  it("keys audits by content, reference, grader, parameters and round", () => {
    const k = auditDedupeKey(task, params, 0);
    expect(k.length).toBeLessThanOrEqual(300);
    expect(auditDedupeKey({ ...task }, { ...params }, 0)).toBe(k);
    const differing = [
      auditDedupeKey({ ...task, fingerprint: "e".repeat(64) }, params, 0),
      auditDedupeKey({ ...task, reference: [{ path: "solution.py", content: "x = 2\n" }] }, params, 0),
      auditDedupeKey(task, { ...params, graderVersion: "g/2" }, 0),
      auditDedupeKey(task, { ...params, sandbox: "process" }, 0),
      auditDedupeKey(task, { ...params, maxMutants: 10 }, 0),
      auditDedupeKey(task, params, 1),
      auditDedupeKey({ ...task, inProcessReason: "the tests monkeypatch the module" }, params, 0),
    ];
    expect(new Set([k, ...differing]).size).toBe(differing.length + 1);
  });

  it("turns a job without a valid AuditResult into an error, never an admission", () => {
    const base = { id: "a", jobId: "j", error: null, reason: null, finishedAt: null };
    expect(auditOutcome({ ...base, state: "succeeded", result: { audit: { status: "passed" } } }).status).toBe("error");
    expect(auditOutcome({ ...base, state: "failed", result: null, reason: "infra_error", error: "boom" })).toEqual({
      status: "error",
      error: "audit job failed (infra_error): boom",
    });
    expect(auditOutcome({ ...base, jobId: null, state: null, result: null }).status).toBe("error");
    const audit = {
      status: "failed",
      reasons: ["r"],
      referenceVerdicts: ["pass"],
      buggyVerdict: "pass",
      expectedTestIds: [],
      mutantsTotal: 0,
      mutantsKilled: 0,
      mutationScore: null,
      surviving: [],
      unsandboxed: false,
    };
    expect(auditOutcome({ ...base, state: "succeeded", result: { audit } })).toMatchObject({
      status: "failed",
      result: { buggyVerdict: "pass" },
    });
  });
});
