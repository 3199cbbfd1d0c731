import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskSpec } from "@agentlab/core";
import { auditTask } from "../../apps/agent/src/grading/audit";
import { Grader } from "../../apps/agent/src/grading/grader";
import { crossFileSandboxed } from "../../apps/agent/src/grading/cross-file";
import { mutantsSandboxed } from "../../apps/agent/src/grading/mutants";
import { sandboxCfg } from "./helpers/judge";

// Admission audits with the judge: what cannot be judged by value is found at audit time and
// refused, unless an admin allowed the labelled in-process mode with a reason; a buggy program that loops forever on the hidden tests
// counts as failing them, with the test that timed out named.

const cfg = sandboxCfg();
let grader: Grader;
beforeAll(() => {
  grader = new Grader(cfg, { workers: 1, limits: { wallTimeoutS: 12, testTimeoutS: 2 } });
});
afterAll(() => grader.close());

const audit = (task: TaskSpec, inProcessReason?: string) =>
  auditTask(grader, task, {
    referenceRuns: 2,
    maxMutants: 4,
    mutate: (src, max) => mutantsSandboxed(cfg, src, max),
    crossFile: (t) => crossFileSandboxed(cfg, t),
    ...(inProcessReason ? { inProcessReason } : {}),
  });
const task = (
  id: string,
  main: string,
  buggy: string,
  hidden: string,
  pub = "import solution\n\ndef test_loads():\n    assert solution is not None\n",
): TaskSpec => ({
  id,
  source_group: id,
  language: "python",
  instruction: "fix",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: buggy }],
  public_tests: [{ path: "test_public.py", content: pub }],
  hidden_tests: [{ path: "test_hidden.py", content: hidden }],
  reference: [{ path: "solution.py", content: main }],
});

describe("admission audits in the judge", () => {
  it("an ordinary task is admitted for the isolated judge", async () => {
    const r = await audit(
      task(
        "plain",
        "def f(x):\n    return x + 1\n",
        "def f(x):\n    return x\n",
        "from solution import f\n\ndef test_f():\n    assert f(1) == 2\n    assert f(-3) == -2\n",
      ),
    );
    expect(r.status, r.reasons.join("; ")).toBe("passed");
    expect(r.isolation).toBe("judge");
    expect(r.isolationReason).toBe("");
    // The killed mutants are kept with their programs (near-miss pairs' rejected answers), each a model failure.
    expect(r.mutantsKilled).toBeGreaterThan(0);
    expect(r.killed).toHaveLength(r.mutantsKilled);
    for (const m of r.killed) {
      expect(m.verdict).not.toBe("pass");
      expect(m.path).toBe("solution.py");
      expect(m.source).not.toBe("def f(x):\n    return x + 1\n");
    }
    expect(r.buggyFailingTests).toEqual([expect.stringContaining("test_f")]);
  });

  const patches = task(
    "patches",
    "def helper():\n    return 1\n\ndef f():\n    return helper() + 1\n",
    "def helper():\n    return 1\n\ndef f():\n    return helper()\n",
    "import solution\n\ndef test_patched(monkeypatch):\n    monkeypatch.setattr(solution, 'helper', lambda: 41)\n    assert solution.f() == 42\n",
  );
  it("tests that monkeypatch the candidate's module are refused, never moved to in-process silently", async () => {
    const r = await audit(patches);
    expect(r.status).toBe("failed");
    expect(r.needsInProcess).toBe(true);
    expect(r.isolation).toBe("judge");
    expect(r.reasons.join(" ")).toContain("needs an admin's mark");
  });

  it("with an admin's reason the same task is graded in-process, the reason recorded (control for the refusal)", async () => {
    const r = await audit(patches, "the tests monkeypatch a helper of the module by design");
    expect(r.status, r.reasons.join("; ")).toBe("passed");
    expect(r.isolation).toBe("in_process");
    expect(r.needsInProcess).toBe(false);
    expect(r.isolationReason).toContain("monkeypatch a helper");
    expect(r.isolationReason).toContain("fails in the isolated judge");
  });

  it("tests that need the candidate's object identity are never in-process without an admin's reason", async () => {
    const main = "SENTINEL = object()\n\ndef f(flag):\n    return SENTINEL if flag else None\n";
    const hidden = "import solution\n\ndef test_identity():\n    assert solution.f(True) is solution.SENTINEL\n";
    const r = await audit(task("identity", main, "SENTINEL = object()\n\ndef f(flag):\n    return None\n", hidden));
    expect(r.isolation).toBe("judge");
    // Refused when the judge cannot carry the identity, admitted when it can.
    expect(r.status === "passed" || r.needsInProcess, r.reasons.join("; ")).toBe(true);
  });

  it("a buggy program that loops forever on a hidden test fails the hidden tests, and the test is named", async () => {
    const main =
      "def halve_to_zero(n):\n    steps = 0\n    while n > 0:\n        n //= 2\n        steps += 1\n    return steps\n";
    const buggy =
      "def halve_to_zero(n):\n    steps = 0\n    while n != 0:\n        n = n - 2 if n % 2 == 0 else n\n        steps += 1\n    return steps\n";
    const pub = "from solution import halve_to_zero\n\ndef test_zero():\n    assert halve_to_zero(0) == 0\n";
    const hidden =
      "from solution import halve_to_zero\n\ndef test_seven():\n    assert halve_to_zero(7) == 3\n\ndef test_one():\n    assert halve_to_zero(1) == 1\n";
    const r = await audit(task("loops", main, buggy, hidden, pub));
    expect(r.status, r.reasons.join("; ")).toBe("passed");
    expect(r.buggyVerdict).toBe("timeout");
    expect(r.buggyDetail.join(" ")).toContain("test_hidden::test_seven");
  });
});
