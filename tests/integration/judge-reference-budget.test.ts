import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskSpec } from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { sandboxCfg } from "./helpers/judge";

// Two QuixBugs traits the judge must not count against a correct program: a test the task itself
// skips (QuixBugs levenshtein and knapsack skip their slowest cases), and a reference that needs
// more than the default per-test budget of 3 s. The reference's skips define the expected set and
// the budget is at least 3× the reference's wall clock. Positive controls: under the previous
// rules (no expected skips, the fixed 3 s budget) the reference itself fails.

const task = (id: string, ref: string, buggy: string, hidden: string): TaskSpec => ({
  id,
  source_group: id,
  language: "python",
  instruction: "fix",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: buggy }],
  public_tests: [
    { path: "test_public.py", content: "from solution import f\n\ndef test_small():\n    assert f(1) == 1\n" },
  ],
  hidden_tests: [{ path: "test_hidden.py", content: hidden }],
  reference: [{ path: "solution.py", content: ref }],
});

// levenshtein-style: one case skipped by the task (too slow for the naive recursion), one skipped
// only when the answer says so (a skip the candidate causes).
const SKIPS = task(
  "skips",
  "def f(n):\n    return n\n",
  "def f(n):\n    return 1\n",
  [
    "import pytest",
    "from solution import f",
    "",
    "@pytest.mark.parametrize('n', [2, 3, 40])",
    "def test_f(n):",
    "    if n == 40:",
    "        pytest.skip('the naive recursion takes minutes here')",
    "    assert f(n) == n",
    "",
    "def test_answer_decides():",
    "    if f(0) is None:",
    "        pytest.skip('no answer')",
    "    assert f(0) == 0",
    "",
  ].join("\n"),
);
// knapsack-style: the reference needs about 3.5 s in one test.
const SLOW_REF = "import time\n\ndef f(n):\n    if n > 1:\n        time.sleep(3.5)\n    return n\n";
const SLOW = task(
  "slow",
  SLOW_REF,
  "def f(n):\n    return 1\n",
  "from solution import f\n\ndef test_big():\n    assert f(100) == 100\n",
);

let grader: Grader;
let refs: ReferenceIds;
beforeAll(() => {
  grader = new Grader(sandboxCfg(), { workers: 1 });
  refs = new ReferenceIds(grader);
});
afterAll(() => grader.close());

async function reference(t: TaskSpec) {
  const ref = await refs.get(t, { isolation: "judge" });
  if (!ref.ok) throw new Error(`${t.id}: ${ref.error}`);
  return ref;
}

describe("skips and the per-test budget come from the reference", () => {
  it("a skip the task declares is no failure; a skip the candidate causes is (control: the old rule fails the reference)", async () => {
    const ref = await reference(SKIPS);
    expect(ref.skipped).toEqual(["test_hidden::test_f[40]"]);
    const opts = { expectedIds: ref.ids, expectedSkips: ref.skipped, limits: ref.limits };
    const r = await grader.grade(SKIPS, SKIPS.reference, opts);
    expect(r.verdict, r.reasons.join("; ")).toBe("pass");
    const old = await grader.grade(SKIPS, SKIPS.reference, { ...opts, expectedSkips: [] });
    expect(old.verdict, "positive control: counting the task's skip as a failure fails the reference").toBe(
      "fail_hidden",
    );
    const dodger = "def f(n):\n    return None if n == 0 else n\n";
    const d = await grader.grade(SKIPS, [{ path: "solution.py", content: dodger }], opts);
    expect(d.verdict, d.reasons.join("; ")).toBe("fail_hidden");
    expect(d.reasons.join(" ")).toContain("test_answer_decides");
  });

  it("a reference slower than the default budget passes when graded as a candidate (control: 3 s times it out)", async () => {
    const ref = await reference(SLOW);
    expect(ref.limits.testTimeoutS ?? 0).toBeGreaterThan(3 * 3.5);
    const opts = { expectedIds: ref.ids, expectedSkips: ref.skipped };
    const r = await grader.grade(SLOW, SLOW.reference, { ...opts, limits: ref.limits });
    expect(r.verdict, r.reasons.join("; ")).toBe("pass");
    const old = await grader.grade(SLOW, SLOW.reference, opts);
    expect(old.verdict, "positive control: the fixed 3 s budget times the reference out").toBe("timeout");
    const wrong = await grader.grade(SLOW, [{ path: "solution.py", content: "def f(n):\n    return 1\n" }], {
      ...opts,
      limits: ref.limits,
    });
    expect(wrong.verdict).toBe("fail_hidden");
  });
});
