import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import type { CandidateFile, GradeResult, GradingIsolation, TaskSpec } from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { probeTask, sandboxCfg } from "./helpers/judge";

// Judge sessions: several candidates of one task graded by one supervisor whose template judge
// collected the tests once (apps/agent/grader/agentlab_grader/warm.py), a fresh judge process
// forked from it per candidate. A session must give the verdicts single grades give, also when
// the tests need the candidate while they are collected (then it grades each one cold), and
// nothing one candidate leaves may reach the next of its session. Positive control for the
// latter: the same spy pair in the unprotected in-process mode, where the second one passes.
// That a session went warm is asserted from what each result says of its judge process
// (`judgeStart`): forked from the template, or a collection of its own.

const RUN = randomBytes(5).toString("hex");
const LIMITS = { wallTimeoutS: 8, testTimeoutS: 2, memoryMb: 256, pids: 48 };
const file = (content: string): CandidateFile[] => [{ path: "solution.py", content }];
const PROBE = probeTask(`sess-${RUN}`, `hidden-marker-${randomBytes(6).toString("hex")}`);
const CANDIDATES = [
  file("def f(x):\n    return x + 1\n"), // pass
  file("def f(x):\n    return x\n"), // fails the public test
  file("def f(x):\n    return x + 1 if x < 5 else x\n"), // fails a hidden test
  file("def f(x:\n    return x\n"), // syntax
  file("def f(x):\n    while True:\n        pass\n"), // per-test budget
  file("import os\nos._exit(3)\n"), // the candidate process dies at import
  file("def g(x):\n    return x + 1\n"), // no f at all
  file("raise ValueError('broken at import')\n"),
  file("def f(x):\n    return x + 1\n"), // pass again, after all of the above
];

// The tests use the candidate while they are collected: a module-level call and a parameter.
const AT_COLLECTION: TaskSpec = {
  ...PROBE,
  id: `sess-collect-${RUN}`,
  source_group: `sess-collect-${RUN}`,
  hidden_tests: [
    {
      path: "test_secret.py",
      content:
        "import pytest\nfrom solution import f\n\nAT_IMPORT = f(0)\n\n@pytest.mark.parametrize('fn', [f])\ndef test_param(fn):\n    assert fn(3) == 4\n\ndef test_import():\n    assert AT_IMPORT == 1\n",
    },
  ],
};

// A candidate leaves something behind where the next candidate of its session could look: its
// /tmp and /dev/shm, and the files of the judge's tmp_path (copied back into the judge). The
// spy answers right only if it finds what the planter left.
const SPY_TASK: TaskSpec = {
  id: `sess-spy-${RUN}`,
  source_group: `sess-spy-${RUN}`,
  language: "python",
  instruction: "fix f",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: "def f(p, x):\n    return x\n" }],
  public_tests: [
    {
      path: "test_public.py",
      content: "from solution import f\n\ndef test_one(tmp_path):\n    assert f(tmp_path, 1) == 2\n",
    },
  ],
  hidden_tests: [
    {
      path: "test_secret.py",
      content: "from solution import f\n\ndef test_two(tmp_path):\n    assert f(tmp_path, 2) == 3\n",
    },
  ],
  reference: [{ path: "solution.py", content: "def f(p, x):\n    return x + 1\n" }],
};
const NAME = `spy-${RUN}`;
const PLANT = file(
  `import os\n\ndef f(p, x):\n    for d in ("/tmp", "/dev/shm", str(p)):\n        try:\n            open(os.path.join(d, "${NAME}"), "w").write("seen")\n        except OSError:\n            pass\n    return x + 1 if x == 1 else x\n`,
);
const FIND = file(
  `import os\n\ndef f(p, x):\n    found = any(os.path.exists(os.path.join(d, "${NAME}")) for d in ("/tmp", "/dev/shm", str(p)))\n    return x + 1 if (found or x == 1) else x\n`,
);

let bwrap: Grader;
let bare: Grader;
let lingering: Grader;
beforeAll(() => {
  // Single grades here are single: no session kept open for the next grade (lingerMs 0).
  bwrap = new Grader(sandboxCfg(), { workers: 1, limits: LIMITS, lingerMs: 0 });
  bare = new Grader(sandboxCfg({ backend: "process", scratchDir: "/tmp/agentlab-test-scratch-process" }), {
    workers: 1,
    limits: LIMITS,
    lingerMs: 0,
  });
  lingering = new Grader(sandboxCfg(), { workers: 1, limits: LIMITS });
});
afterAll(() => {
  bwrap.close();
  bare.close();
  lingering.close();
  rmSync(`/tmp/${NAME}`, { force: true }); // the in-process control's planted file
});

async function expected(g: Grader, task: TaskSpec, isolation: GradingIsolation = "judge") {
  const ref = await g.referenceIds(task, undefined, { isolation });
  expect(ref.result.verdict, ref.result.reasons.join("; ")).toBe("pass");
  return { expectedIds: ref.ids, expectedSkips: ref.skipped, limits: g.budgetFromReference(ref.result), isolation };
}

describe("judge sessions", () => {
  for (const [name, g] of [
    ["bwrap", () => bwrap],
    ["process backend", () => bare],
  ] as const)
    it(`give the verdicts single grades give (${name})`, async () => {
      for (const task of [PROBE, AT_COLLECTION]) {
        const opts = await expected(g(), task);
        const singleResults: GradeResult[] = [];
        for (const c of CANDIDATES) singleResults.push(await g().grade(task, c, opts));
        const single = singleResults.map((r) => r.verdict);
        const session = await g().gradeSession(task, CANDIDATES, opts);
        expect(
          session.map((r) => r.verdict),
          task.id,
        ).toEqual(single);
        // Warm: every candidate of a session that got a judge process (all but the syntax error)
        // ran in one forked from the template, none collected the tests again. Positive control:
        // each single grade reports its own collection, and so does the cold fallback's session.
        const started = (r: GradeResult) => r.verdict !== "fail_syntax";
        const starts = session.filter(started).map((r) => r.judgeStart);
        expect(starts, task.id).toEqual(starts.map(() => (task === PROBE ? "forked" : "collected")));
        expect(singleResults.filter(started).every((r) => r.judgeStart === "collected")).toBe(true);
        if (task === PROBE)
          expect(single.slice(0, 5), task.id).toEqual(["pass", "fail_public", "fail_hidden", "fail_syntax", "timeout"]);
        expect(single.at(-1)).toBe("pass");
      }
      expect(
        g()
          .sandboxes()
          .every((s) => s.replacedBecause === null),
      ).toBe(true);
    });

  it("keep a single grade's session open for the same task's next grade (lingering)", async () => {
    const opts = await expected(bwrap, PROBE);
    const single = [];
    for (const c of CANDIDATES) single.push((await bwrap.grade(PROBE, c, opts)).verdict);
    const warm = [];
    for (const c of CANDIDATES) warm.push(await lingering.grade(PROBE, c, opts));
    expect(warm.map((r) => r.verdict)).toEqual(single);
    const started = warm.filter((r) => r.verdict !== "fail_syntax");
    expect(started.map((r) => r.judgeStart)).toEqual(started.map(() => "forked"));
    // Once idle past lingerMs the session ends and the sandbox passes the usual checks.
    await new Promise((r) => setTimeout(r, 1500));
    expect(lingering.sandboxes().map((s) => [s.starts, s.replacedBecause])).toEqual([[1, null]]);
    const spyOpts = await expected(bwrap, SPY_TASK);
    const spies = [];
    for (const c of [PLANT, FIND, FIND]) spies.push((await lingering.grade(SPY_TASK, c, spyOpts)).verdict);
    expect(spies, "the spy finds nothing in a lingering session").toEqual([
      "fail_hidden",
      "fail_hidden",
      "fail_hidden",
    ]);
  });

  it("let nothing one candidate leaves reach the next (positive control: in-process)", async () => {
    const inProcess = await expected(bare, SPY_TASK, "in_process");
    expect((await bare.grade(SPY_TASK, PLANT, inProcess)).verdict).toBe("fail_hidden");
    const control = await bare.grade(SPY_TASK, FIND, inProcess);
    expect(control.verdict, "positive control: in-process the spy finds the planted file").toBe("pass");
    const opts = await expected(bwrap, SPY_TASK);
    const [plant, find, again] = await bwrap.gradeSession(SPY_TASK, [PLANT, FIND, FIND], opts);
    expect(plant?.verdict).toBe("fail_hidden");
    expect(find?.verdict, find?.reasons.join("; ")).toBe("fail_hidden");
    expect(again?.verdict).toBe("fail_hidden");
  });
});
