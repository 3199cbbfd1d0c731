import { z } from "zod";
import { DomainError } from "../errors";
import { poolSeeds, type SeedTaskOutcome } from "../stats/pooling";
import { SNAPSHOT_QUALITIES } from "../teacher/quality";
import { HOLM_METHOD, holmAdjust } from "./holm";

// The study report: the arms × metrics matrix and the primary contrasts, each the pooled paired
// clustered comparison of two arms' test outcomes (core stats/pooling: seed j of one arm against
// seed j of the other, the arms sharing their training seeds), Holm-adjusted together. The A/A
// arm's contrast against the reference is the empirical null, shown apart and never adjusted.

const Interval = z.tuple([z.number(), z.number()]);

export const StudyArmRow = z.object({
  name: z.string(),
  role: z.enum(["reference", "arm", "aa"]),
  factor: z.string().nullable(),
  experimentId: z.string(),
  seeds: z.array(z.number().int()),
  /** Dev pass@1 of the arm's test adapters (selection split: optimistic by construction). */
  dev: z.number().nullable(),
  /** Test pass@1 over tasks, averaged over the seeds' adapters. */
  test: z.number(),
  testTasks: z.number().int(),
  supervisedTokens: z.number().nullable(),
  /** What the arm's SFT answers had to be to get in (teacher/quality.ts); absent in reports built before it. */
  dataQuality: z.enum(SNAPSHOT_QUALITIES).nullable().optional(),
  /** The arm's SFT snapshot: samples and train tasks. */
  trainSamples: z.number().nullable(),
  trainTasks: z.number().nullable(),
  /** Optimizer steps behind each seed's test model (its SFT snapshot's step); null where not recorded. */
  steps: z.array(z.number().int().nullable()),
});
export type StudyArmRow = z.infer<typeof StudyArmRow>;

const Comparison = z.object({
  /** `[treated, control]`. */
  arms: z.tuple([z.string(), z.string()]),
  delta: z.number(),
  interval: Interval,
  p: z.number(),
  n: z.number().int(),
  units: z.number().int(),
  /** "recipe" (≥ 3 seeds: seed variance included) or "given-seeds" (never significant). */
  scope: z.enum(["recipe", "given-seeds"]),
  test: z.string(),
  /** Tasks of one arm without a counterpart in the other (excluded from the pairs). */
  unpaired: z.number().int(),
});

export const StudyContrast = Comparison.extend({ p_holm: z.number(), significant: z.boolean() });
export type StudyContrast = z.infer<typeof StudyContrast>;

export const StudyTestClaim = z.object({
  splitId: z.string(),
  claimedAt: z.string(),
  models: z.array(z.string()),
  /** Claims of the split's test set in its ledger when the report was built (this one included). */
  readsOfSplit: z.number().int(),
});

export const StudyTokens = z.object({
  /** Whether the definition demanded token matching, and within what relative tolerance. */
  matching: z.object({ tolerance: z.number() }).nullable(),
  byArm: z.record(z.string(), z.number().nullable()),
  /** Largest |tokens − reference| / reference over the arms with counts; null without counts. */
  maxRelativeGap: z.number().nullable(),
});

export const StudyReport = z.object({
  studyId: z.string(),
  name: z.string(),
  generatedAt: z.string(),
  alpha: z.number(),
  arms: z.array(StudyArmRow),
  contrasts: z.array(StudyContrast),
  aa: Comparison.nullable(),
  testClaim: StudyTestClaim,
  tokens: StudyTokens,
  methods: z.object({ holm: z.string(), contrast: z.string() }),
});
export type StudyReport = z.infer<typeof StudyReport>;

/** One test task under one arm: its pass rate per seed (the seed's test adapter), in the arm's seed order. */
export type ArmTaskOutcome = { taskId: string; group: string; cluster?: string | undefined; bySeed: number[] };
export type ArmOutcomes = Omit<StudyArmRow, "test" | "testTasks"> & { tasks: ArmTaskOutcome[] };

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function compareArms(
  treated: ArmOutcomes,
  control: ArmOutcomes,
  opts: { alpha: number; iterations: number; seed: number },
) {
  if (treated.seeds.length !== control.seeds.length)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `arms "${treated.name}" and "${control.name}" have different seed counts`,
    );
  const ctl = new Map(control.tasks.map((t) => [t.taskId, t]));
  const pairs: SeedTaskOutcome[] = [];
  for (const t of treated.tasks) {
    const c = ctl.get(t.taskId);
    if (!c) continue;
    pairs.push({
      taskId: t.taskId,
      group: t.group,
      cluster: t.cluster,
      base: mean(c.bySeed),
      baseBySeed: c.bySeed,
      bySeed: t.bySeed,
    });
  }
  const unpaired = treated.tasks.length + control.tasks.length - 2 * pairs.length;
  if (pairs.length === 0)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `arms "${treated.name}" and "${control.name}" share no graded test task`,
    );
  const r = poolSeeds(pairs, treated.seeds, {
    alpha: opts.alpha,
    iterations: opts.iterations,
    seed: opts.seed,
    mde: "approximate",
  });
  const p = r.pooled;
  return {
    arms: [treated.name, control.name] as [string, string],
    delta: p.delta,
    interval: p.ci,
    p: p.p,
    n: p.n,
    units: p.units,
    scope: p.scope,
    test: p.test,
    unpaired,
  };
}

export type StudyReportInput = {
  studyId: string;
  name: string;
  generatedAt: string;
  alpha: number;
  bootstrap: { iterations: number; seed: number };
  arms: ArmOutcomes[];
  contrasts: { arms: [string, string] }[];
  testClaim: z.infer<typeof StudyTestClaim>;
  tokenMatching: { tolerance: number } | null;
};

export function buildStudyReport(i: StudyReportInput): StudyReport {
  const byName = new Map(i.arms.map((a) => [a.name, a]));
  const arm = (n: string) => {
    const a = byName.get(n);
    if (!a) throw new DomainError("PRECONDITION_FAILED", `no arm named "${n}"`);
    return a;
  };
  const opts = { alpha: i.alpha, ...i.bootstrap };
  const raw = i.contrasts.map((c) => compareArms(arm(c.arms[0]), arm(c.arms[1]), opts));
  const adjusted = holmAdjust(raw.map((r) => r.p));
  const contrasts = raw.map((r, k) => {
    const pHolm = adjusted[k] ?? 1;
    const excludesZero = r.interval[0] > 0 || r.interval[1] < 0;
    return { ...r, p_holm: pHolm, significant: r.scope === "recipe" && pHolm < i.alpha && excludesZero };
  });
  const reference = i.arms.find((a) => a.role === "reference");
  const aaArm = i.arms.find((a) => a.role === "aa");
  const aa = aaArm && reference ? compareArms(aaArm, reference, opts) : null;
  const refTokens = reference?.supervisedTokens ?? null;
  const gaps = i.arms.flatMap((a) =>
    refTokens && a.supervisedTokens !== null ? [Math.abs(a.supervisedTokens - refTokens) / refTokens] : [],
  );
  return StudyReport.parse({
    studyId: i.studyId,
    name: i.name,
    generatedAt: i.generatedAt,
    alpha: i.alpha,
    arms: i.arms.map(({ tasks, ...a }) => ({
      ...a,
      test: mean(tasks.map((t) => mean(t.bySeed))),
      testTasks: tasks.length,
    })),
    contrasts,
    aa,
    testClaim: i.testClaim,
    tokens: {
      matching: i.tokenMatching,
      byArm: Object.fromEntries(i.arms.map((a) => [a.name, a.supervisedTokens])),
      maxRelativeGap: gaps.length ? Math.max(...gaps) : null,
    },
    methods: {
      holm: HOLM_METHOD,
      contrast:
        "Each contrast pairs the two arms' test tasks, seed j against seed j (core poolSeeds with the control arm as the per-seed base): " +
        "clustered by unit, seed-to-seed variance included with ≥ 3 seeds; with fewer the contrast holds given these seeds and is never significant.",
    },
  });
}
