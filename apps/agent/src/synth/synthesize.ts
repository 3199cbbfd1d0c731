import { sha256Hex, type TaskSpec } from "@agentlab/core";
import type { Grader } from "../grading/grader";
import { killsByTests } from "../grading/audit";
import type { MutationSet } from "../grading/mutants";
import type { Program } from "./sources";

// Bug synthesis: mutate a correct program with the audit's operators and keep the variants the
// hidden tests kill. Deterministic: mutants are tried in the order of a hash of (group, mutant),
// so a rebuild over the same datasets yields the same pool (grading outcomes are deterministic
// for these programs; anything flaky fails the 3× reference screen and is dropped).

export type SynthOptions = {
  variants: number;
  maxTries: number;
  mutate: (source: string, max: number) => Promise<MutationSet>;
};
export type SynthOutcome = { tasks: TaskSpec[]; dropped: string | null };

export async function synthesize(grader: Grader, p: Program, opts: SynthOptions): Promise<SynthOutcome> {
  const set = await opts.mutate(p.source, 400).catch(() => null);
  if (!set || set.mutants.length === 0) return { tasks: [], dropped: "no mutants" };
  const base = (id: string, buggy: string, meta: Record<string, unknown>): TaskSpec => ({
    id,
    source_group: p.group,
    language: "python",
    instruction: p.instruction,
    files: [
      { path: "solution.py", role: "main", content: buggy },
      ...(p.dependencies ?? []).map((d) => ({ path: d.path, role: "dependency" as const, content: d.content })),
    ],
    public_tests: [{ path: "test_public.py", content: p.publicTests }],
    hidden_tests: [{ path: "test_hidden.py", content: p.hiddenTests }],
    reference: [{ path: "solution.py", content: set.normalized }],
    metadata: { origin: p.origin, license: p.license, ...meta },
    ...(p.cluster ? { cluster: p.cluster } : {}),
  });
  const probe = base(`${p.idBase}-ref`, set.normalized, {});
  // Reference screen: 3 passes in a row with the same test ids each time.
  const first = await grader.referenceIds(probe);
  if (first.result.verdict !== "pass") return { tasks: [], dropped: `reference ${first.result.verdict}` };
  for (let i = 0; i < 2; i++) {
    const r = await grader.grade(probe, probe.reference, { expectedIds: first.ids });
    if (r.verdict !== "pass") return { tasks: [], dropped: `reference flaky (${r.verdict})` };
  }
  const ordered = [...set.mutants].sort((a, b) =>
    sha256Hex(p.group + a.source).localeCompare(sha256Hex(p.group + b.source)),
  );
  const tasks: TaskSpec[] = [];
  const usedOps = new Set<string>();
  for (const m of ordered.slice(0, opts.maxTries)) {
    if (tasks.length >= opts.variants) break;
    if (usedOps.has(m.operator) && ordered.length > opts.variants * 2) continue; // diversity of bug types
    const task = base(`${p.idBase}-m${tasks.length + 1}`, m.source, {
      bug_type: m.operator,
      mutation: m.description,
      mutation_line: m.line,
    });
    const r = await grader.grade(task, task.files, { expectedIds: first.ids, limits: { wallTimeoutS: 5 } });
    const hiddenFails = r.tests.some((t) => t.layer === "hidden" && t.outcome !== "passed");
    if (!killsByTests(r.verdict) || r.verdict === "timeout" || !hiddenFails) continue;
    usedOps.add(m.operator);
    task.metadata = {
      ...task.metadata,
      audit: { reference_passes: 3, buggy_verdict: r.verdict, expected_test_ids: first.ids, grader: r.graderVersion },
    };
    tasks.push(task);
  }
  return { tasks, dropped: tasks.length === 0 ? "no killed mutant" : null };
}
