import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import type { CandidateFile, GradeResult, GradingIsolation, TaskSpec } from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { sandboxCfg } from "./helpers/judge";

// The candidate template (apps/agent/grader/agentlab_grader/cand_template.py): in a judge session
// of a task with a support module, each candidate process is forked from a process that imported
// that module once. A session must give the verdicts single (cold) grades give; a candidate's
// change to the module must not reach the next candidate; the template must hold nothing of the
// hidden tests. How each candidate began is in its result (`candidateStart`: "forked" from the
// template, or "imported", a cold start). Positive controls: single grades start cold; a task
// whose main file loads the module by importlib has no template (same candidates, cold); a
// candidate that mutates and reads in one process fails (the probe sees a mutation); in-process
// grading, where the support module's import does find the hidden tests.

const RUN = randomBytes(5).toString("hex");
const MARKER = `hidden-marker-${randomBytes(6).toString("hex")}`;
const LIMITS = { wallTimeoutS: 8, testTimeoutS: 2, memoryMb: 256, pids: 48 };
const sol = (content: string): CandidateFile[] => [{ path: "solution.py", content }];

// At import it looks for the hidden tests' marker in every file it can reach from its directory
// and the root's /tmp, and keeps what it found: a probe of what the template holds.
const LIMITS_PY = [
  "import colorsys, fractions, os",
  `M = '${[...MARKER].reverse().join("")}'[::-1]`,
  "MAX = 10",
  "SEEN = False",
  "for d in ('.', '/tmp', os.environ.get('TMPDIR', '/tmp')):",
  "    for root, _dirs, files in os.walk(d):",
  "        for n in files:",
  "            try:",
  `                SEEN = SEEN or M in open(os.path.join(root, n), errors='replace').read()`,
  "            except OSError:",
  "                pass",
  "",
].join("\n");
const MAIN = "import limits\n\ndef f(x):\n    return min(x, limits.MAX)\n";
const task = (id: string, main: string): TaskSpec => ({
  id,
  source_group: id,
  language: "python",
  instruction: "cap f at limits.MAX",
  metadata: {},
  files: [
    { path: "solution.py", role: "main", content: main.replace("limits.MAX)", "0)") },
    { path: "limits.py", role: "dependency", content: LIMITS_PY },
  ],
  public_tests: [
    { path: "test_public.py", content: "from solution import f\n\ndef test_cap():\n    assert f(50) == 10\n" },
  ],
  hidden_tests: [
    {
      path: "test_secret.py",
      content: `SECRET = "${MARKER}"\nfrom solution import f\n\ndef test_low():\n    assert f(3) == 3\n`,
    },
  ],
  reference: [{ path: "solution.py", content: MAIN }],
});
const WARM = task(`ctpl-${RUN}`, MAIN);
// The same task, its main file loading the module through importlib: no import statement names
// it, so no template is made and every candidate starts cold (the comparison).
const COLD = task(
  `ctpl-cold-${RUN}`,
  MAIN.replace("import limits", "import importlib\nlimits = importlib.import_module('limits')"),
);

const CANDIDATES = [
  sol(MAIN), // pass
  sol("import limits\n\ndef f(x):\n    return x\n"), // fails the public test
  sol("import limits\n\ndef f(x):\n    return min(x, limits.MAX) if x > 4 else x + 1\n"), // fails a hidden test
  sol("import limits\n\ndef f(x:\n"), // syntax
  sol("import limits\n\ndef f(x):\n    while True:\n        pass\n"), // per-test budget
  sol("import limits, os\nos._exit(3)\n"), // dies at import
  sol("import limits\nlimits.MAX = 99\n\ndef f(x):\n    return min(x, 10)\n"), // passes, leaves MAX = 99 behind
  sol(MAIN), // passes only if MAX is 10 again
  sol("import limits\n\ndef f(x):\n    return min(x, 10) if limits.SEEN else x\n"), // passes only if the template saw the tests
  sol("import limits\nlimits.MAX = 99\n\ndef f(x):\n    return min(x, limits.MAX)\n"), // control: its own mutation, seen
];

let bwrap: Grader;
let bare: Grader;
beforeAll(() => {
  bwrap = new Grader(sandboxCfg(), { workers: 1, limits: LIMITS, lingerMs: 0 });
  bare = new Grader(sandboxCfg({ backend: "process", scratchDir: "/tmp/agentlab-test-scratch-process" }), {
    workers: 1,
    limits: LIMITS,
    lingerMs: 0,
  });
});
afterAll(() => {
  bwrap.close();
  bare.close();
});

async function expected(g: Grader, t: TaskSpec, isolation: GradingIsolation = "judge") {
  const ref = await g.referenceIds(t, undefined, { isolation });
  expect(ref.result.verdict, ref.result.reasons.join("; ")).toBe("pass");
  return { expectedIds: ref.ids, expectedSkips: ref.skipped, limits: g.budgetFromReference(ref.result), isolation };
}

const started = (r: GradeResult) => r.verdict !== "fail_syntax";

describe("the candidate template", () => {
  for (const [name, g] of [
    ["bwrap", () => bwrap],
    ["process backend", () => bare],
  ] as const)
    it(`forks a session's candidates warm, with the verdicts of cold ones (${name})`, async () => {
      const opts = await expected(g(), WARM);
      const single: GradeResult[] = [];
      for (const c of CANDIDATES) single.push(await g().grade(WARM, c, opts));
      const session = await g().gradeSession(WARM, CANDIDATES, opts);
      const verdicts = session.map((r) => r.verdict);
      expect(verdicts).toEqual(single.map((r) => r.verdict));
      expect(verdicts).toEqual([
        "pass",
        "fail_public",
        "fail_hidden",
        "fail_syntax",
        "timeout",
        verdicts[5], // a candidate that exits at import: whatever a single grade says (asserted above)
        "pass",
        "pass", // candidate 7 does not see candidate 6's MAX = 99
        // The template never saw the hidden tests; the unsandboxed process backend shares the
        // host's /tmp, where the judge's workspace is: there the spy finds them, cold or warm.
        name === "bwrap" ? "fail_public" : verdicts[8],
        "fail_public", // control: a mutation is seen in its own process
      ]);
      expect(session.filter(started).map((r) => r.candidateStart)).toEqual(session.filter(started).map(() => "forked"));
      // Positive controls: single grades and the task without a template start cold.
      expect(single.filter(started).every((r) => r.candidateStart === "imported")).toBe(true);
      const coldOpts = await expected(g(), COLD);
      const cold = await g().gradeSession(COLD, CANDIDATES, coldOpts);
      expect(cold.map((r) => r.verdict)).toEqual(verdicts);
      expect(cold.filter(started).every((r) => r.candidateStart === "imported")).toBe(true);
      expect(
        g()
          .sandboxes()
          .every((s) => s.replacedBecause === null),
      ).toBe(true);
    });

  it("grades a candidate that ships a support module's name as a single grade does", async () => {
    // The host drops candidate files other than the main files, so a shipped `limits.py` or
    // `colorsys.py` never reaches the grader (the runner's own check: test_candidate_template.py).
    const own = [...sol(MAIN), { path: "colorsys.py", content: "MAX = 1\n" }];
    const opts = await expected(bwrap, WARM);
    const [first, second] = await bwrap.gradeSession(WARM, [sol(MAIN), own], opts);
    const single = await bwrap.grade(WARM, own, opts);
    expect(first?.candidateStart).toBe("forked");
    expect(second?.ignoredCandidatePaths).toEqual(["colorsys.py"]);
    expect(second?.verdict).toBe(single.verdict);
  });

  it("positive control: in-process, the support module's import finds the hidden tests", async () => {
    const opts = await expected(bare, WARM, "in_process");
    const spy = CANDIDATES[8] ?? [];
    expect((await bare.grade(WARM, spy, opts)).verdict).toBe("pass");
  });

  it("an agent with AGENTLAB_CANDIDATE_TEMPLATE=0 starts every candidate cold (the operator's switch)", async () => {
    const off = new Grader(sandboxCfg({ candidateTemplate: false }), { workers: 1, limits: LIMITS, lingerMs: 0 });
    try {
      const opts = await expected(off, WARM);
      const session = await off.gradeSession(WARM, [sol(MAIN), sol(MAIN)], opts);
      expect(session.map((r) => r.verdict)).toEqual(["pass", "pass"]);
      expect(session.map((r) => r.candidateStart)).toEqual(["imported", "imported"]);
    } finally {
      off.close();
    }
  });
});
