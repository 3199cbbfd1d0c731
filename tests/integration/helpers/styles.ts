import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskSpec } from "@agentlab/core";
import { Grader } from "../../../apps/agent/src/grading/grader";
import { sandboxCfg } from "./judge";

/** A task style: the reference main file must pass in the judge, the buggy one must fail the hidden tests. */
export type Style = {
  name: string;
  main: string;
  buggy: string;
  tests: string;
  support?: { path: string; content: string }[];
};

const task = (s: Style, i: number, prefix: string): TaskSpec => ({
  id: `${prefix}-${i}`,
  source_group: `${prefix}-${i}`,
  language: "python",
  instruction: "fix",
  metadata: {},
  files: [
    { path: "solution.py", role: "main", content: s.buggy },
    ...(s.support ?? []).map((f) => ({ ...f, role: "dependency" as const })),
  ],
  public_tests: [
    { path: "test_public.py", content: "import solution\n\ndef test_imports():\n    assert solution is not None\n" },
  ],
  hidden_tests: [{ path: "test_hidden.py", content: s.tests }],
  reference: [{ path: "solution.py", content: s.main }],
});

/** One vitest case per style, graded in the isolated judge (no in-process fallback). */
export function describeStyles(title: string, prefix: string, styles: Style[]): void {
  let grader: Grader;
  beforeAll(() => {
    grader = new Grader(sandboxCfg(), { workers: 1, limits: { wallTimeoutS: 8 } });
  });
  afterAll(() => grader.close());
  describe(title, () => {
    styles.forEach((s, i) =>
      it(s.name, async () => {
        const t = task(s, i, prefix);
        const ref = await grader.referenceIds(t);
        expect(ref.result.verdict, ref.result.reasons.join("; ") + ref.result.stdoutTail.slice(-1500)).toBe("pass");
        expect(ref.result.isolation).toBe("judge");
        const buggy = await grader.grade(
          t,
          t.files.filter((f) => f.role === "main"),
          { expectedIds: ref.ids },
        );
        expect(buggy.verdict, buggy.reasons.join("; ")).toBe("fail_hidden");
      }),
    );
  });
}
