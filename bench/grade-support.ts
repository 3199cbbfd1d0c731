// `BENCH_GRADE_SUPPORT=N npm run bench -- grade`: the candidate template (cand_template.py) alone.
// One task whose main file imports a support module with a realistic import (standard modules the
// runner has not loaded, and a table built at import: ~BENCH_GRADE_SUPPORT_MS ms, default 50), and
// the same task with that import made through importlib (no import statement names the module, so
// no template: every candidate imports it itself). Each is graded as judge sessions of N candidates
// (the correct fix) on one worker; per-candidate wall time compared. Prints one JSON line.
import { loadavg } from "node:os";
import type { TaskSpec } from "@agentlab/core";
import { Grader } from "../apps/agent/src/grading/grader";
import type { SandboxConfig } from "../apps/agent/src/sandbox/types";

const MAIN = "import limits\n\ndef f(x):\n    return min(x, limits.MAX) + limits.TABLE[x % 7] * 0\n";

function task(id: string, main: string, ms: number): TaskSpec {
  const support = [
    "import statistics, fractions, decimal, dataclasses, json, ipaddress, difflib, colorsys, time",
    "MAX = 10",
    "# Work at import, as a support module that builds a table would do.",
    `_end = time.process_time() + ${ms / 1000}`,
    "while True:",
    "    TABLE = [fractions.Fraction(i, 7) for i in range(200)]",
    "    if time.process_time() >= _end:",
    "        break",
    "",
  ].join("\n");
  return {
    id,
    source_group: id,
    language: "python",
    instruction: "cap f",
    metadata: {},
    files: [
      { path: "solution.py", role: "main", content: main.replace("limits.MAX)", "0)") },
      { path: "limits.py", role: "dependency", content: support },
    ],
    public_tests: [
      { path: "test_public.py", content: "from solution import f\n\ndef test_cap():\n    assert f(50) == 10\n" },
    ],
    hidden_tests: [
      { path: "test_hidden.py", content: "from solution import f\n\ndef test_low():\n    assert f(3) == 3\n" },
    ],
    reference: [{ path: "solution.py", content: MAIN }],
  };
}

export async function supportBench(cfg: SandboxConfig, n: number): Promise<void> {
  const ms = Number(process.env.BENCH_GRADE_SUPPORT_MS ?? 50);
  const viaImportlib = MAIN.replace("import limits", "import importlib\nlimits = importlib.import_module('limits')");
  const ways = { warm: task("support-warm", MAIN, ms), cold: task("support-cold", viaImportlib, ms) };
  const grader = new Grader(cfg, { workers: 1, lingerMs: 0 });
  const out: Record<string, number> = {};
  const starts: Record<string, string[]> = {};
  try {
    for (const [name, t] of Object.entries(ways)) {
      const ids = (await grader.referenceIds(t)).ids;
      await grader.gradeSession(t, [t.reference, t.reference], { expectedIds: ids }); // warm-up
      const times: number[] = [];
      for (let round = 0; round < 3; round++) {
        const s = performance.now();
        const res = await grader.gradeSession(
          t,
          Array.from({ length: n }, () => t.reference),
          { expectedIds: ids },
        );
        times.push((performance.now() - s) / n);
        if (res.some((r) => r.verdict !== "pass")) throw new Error(`${name}: not every candidate passed`);
        starts[name] = [...new Set(res.map((r) => r.candidateStart ?? "none"))];
      }
      out[`${name}_per_candidate_ms`] = Math.round(Math.min(...times) * 10) / 10;
    }
  } finally {
    grader.close();
  }
  console.log(
    JSON.stringify({
      bench: "grade-support",
      session: n,
      import_ms: ms,
      ...out,
      saved_ms: Math.round(((out.cold_per_candidate_ms ?? 0) - (out.warm_per_candidate_ms ?? 0)) * 10) / 10,
      starts,
      load: Math.round((loadavg()[0] ?? 0) * 10) / 10,
    }),
  );
}
