import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { CandidateFile, GradeResult, GradingIsolation, TaskSpec } from "@agentlab/core";
import { Grader } from "../../../apps/agent/src/grading/grader";
import type { SandboxConfig } from "../../../apps/agent/src/sandbox/types";

// Shared by the judge's adversarial tests. A probe candidate is a WRONG fix that answers right
// only when its attack works, so an attack that succeeds shows up as `pass`. Each probe also runs
// against an unprotected run (positive control), where it must succeed: a probe that cannot
// succeed anywhere proves nothing about the judge.

export const GRADER_DIR = join(process.cwd(), "apps/agent/grader");
export const GRADER_PYTHON = join(GRADER_DIR, ".venv/bin/python");

export const sandboxCfg = (over: Partial<SandboxConfig> = {}): SandboxConfig => ({
  backend: "bwrap",
  graderDir: GRADER_DIR,
  uid: 65534,
  gid: 65534,
  scratchDir: "/tmp/agentlab-test-scratch",
  ...over,
});

/**
 * A task whose hidden tests and reference carry `marker`; f(x) = x + 1, wrong fixes return x.
 * `style` picks how the hidden tests are written: plain pytest asserts (star and module imports),
 * unittest assertions, or asserts through helpers (`isclose`, `abs`) that a star import could shadow.
 */
export function probeTask(
  id: string,
  marker: string,
  style: "pytest" | "unittest" | "helpers" | "builtins" = "pytest",
): TaskSpec {
  const bodies = {
    pytest: [
      "from solution import *  # noqa",
      "import solution",
      "",
      "def test_two():",
      "    assert f(2) == 3",
      "",
      "def test_ten():",
      "    assert solution.f(10) == 11",
    ],
    unittest: [
      "import unittest",
      "from solution import f",
      "",
      "class TestUnit(unittest.TestCase):",
      "    def test_five(self):",
      "        self.assertEqual(f(5), 6)",
    ],
    helpers: [
      "from math import isclose",
      "from solution import *  # noqa",
      "",
      "def test_two():",
      "    assert isclose(f(2), 3)",
      "",
      "def test_abs():",
      "    assert abs(f(3) - 4) < 1e-9",
    ],
    builtins: [
      "from solution import f",
      "",
      "def test_abs():",
      "    assert abs(f(3) - 4) < 1e-9",
      "",
      "def test_round():",
      "    assert round(f(2)) == 3 or abs(f(2) - 3) < 1e-9",
    ],
  };
  const hidden = [`SECRET = "${marker}"`, ...bodies[style], ""].join("\n");
  return {
    id,
    source_group: id,
    language: "python",
    instruction: "fix f",
    metadata: {},
    files: [{ path: "solution.py", role: "main", content: "def f(x):\n    return x\n" }],
    public_tests: [
      { path: "test_public.py", content: "from solution import f\n\ndef test_one():\n    assert f(1) == 2\n" },
    ],
    // Named to sort after the public tests: pytest imports the hidden module after the candidate.
    hidden_tests: [{ path: "test_secret.py", content: hidden }],
    reference: [{ path: "solution.py", content: `# ${marker}\ndef f(x):\n    return x + 1\n` }],
  };
}

/** `attack` is a function body returning True when the attack worked; right only on the public input otherwise. */
export const ifWorks = (attack: string, prelude = ""): string =>
  `import os, sys\n${prelude}\ndef _attack():\n${attack
    .split("\n")
    .map((l) => `    ${l}`)
    .join(
      "\n",
    )}\ntry:\n    _OK = bool(_attack())\nexcept BaseException:\n    _OK = False\n\ndef f(x):\n    return x + 1 if (_OK or x == 1) else x\n`;

/** A wrong fix (right on the public input only) with `patch` run at import. */
export const wrongWith = (patch: string): string => `${patch}\n\ndef f(x):\n    return x + 1 if x == 1 else x\n`;

export type Graders = { judge: Grader; noCgroups: Grader; inProcess: Grader; ids: Map<string, string[]> };

export function makeGraders(limits = { wallTimeoutS: 8, testTimeoutS: 3, memoryMb: 256, pids: 48 }): Graders {
  return {
    judge: new Grader(sandboxCfg(), { workers: 1, limits }),
    noCgroups: new Grader(sandboxCfg({ cgroups: false }), { workers: 1, limits }),
    // The unprotected comparison: the candidate inside pytest's own process, no namespaces.
    inProcess: new Grader(sandboxCfg({ backend: "process", scratchDir: "/tmp/agentlab-test-scratch-process" }), {
      workers: 1,
      limits,
    }),
    ids: new Map(),
  };
}

export async function gradeWith(
  g: Graders,
  which: "judge" | "noCgroups" | "inProcess",
  task: TaskSpec,
  content: string,
  extra: CandidateFile[] = [],
): Promise<GradeResult> {
  const grader = g[which];
  const isolation: GradingIsolation = which === "inProcess" ? "in_process" : "judge";
  const key = `${which}:${task.id}`;
  let ids = g.ids.get(key);
  if (!ids) {
    const ref = await grader.referenceIds(task, undefined, { isolation });
    if (ref.result.verdict !== "pass")
      throw new Error(`reference of ${task.id} does not pass under ${which}: ${ref.result.reasons.join("; ")}`);
    ids = ref.ids;
    g.ids.set(key, ids);
  }
  return grader.grade(task, [{ path: "solution.py", content }, ...extra], { expectedIds: ids, isolation });
}

export const closeGraders = (g: Graders) => {
  g.judge.close();
  g.noCgroups.close();
  g.inProcess.close();
};

/**
 * The naive grader a judge must beat: the candidate's files and the tests in one directory,
 * `python -m pytest` there, and `pass` when pytest's exit status is 0 or its JUnit report has
 * no failure. Nothing else: no sandbox, no separate process, no checks.
 */
export function naiveGrade(task: TaskSpec, content: string, extra: CandidateFile[] = []): "pass" | "fail" {
  const dir = mkdtempSync("/tmp/agentlab-naive-");
  try {
    const files = [
      ...task.files.filter((f) => f.role !== "main"),
      { path: "solution.py", content },
      ...extra,
      ...task.public_tests,
      ...task.hidden_tests,
    ];
    for (const f of files) {
      mkdirSync(dirname(join(dir, f.path)), { recursive: true });
      writeFileSync(join(dir, f.path), f.content);
    }
    const junit = join(dir, "junit.xml");
    const r = spawnSync(GRADER_PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", `--junitxml=${junit}`, dir], {
      cwd: dir,
      timeout: 30_000,
      encoding: "utf8",
    });
    let report = "";
    try {
      report = spawnSync("cat", [junit], { encoding: "utf8" }).stdout;
    } catch {
      report = "";
    }
    const junitClean = report.includes("<testcase") && !/<(failure|error)\b/.test(report);
    return r.status === 0 || junitClean ? "pass" : "fail";
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
