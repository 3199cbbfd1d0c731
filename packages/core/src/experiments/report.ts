import type { LeakageReport } from "../tasks/leakage";
import { poolSeeds, type PooledResult } from "../stats/pooling";
import { devSummary, STATS_METHODS, testSummary, type DevSummaryRow, type TestSummaryRow } from "./report-stats";
import type { ExperimentConfig } from "./config";
import { assertSameProtocol, checkProtocol, type ProtocolCheck, type RecordedProtocol } from "./protocol";
import { devCurveOf, modelKey, modelLabel, type DevCurve, type ModelRef, type SelectionDecision } from "./selection";
import type { ReportHeader } from "./report-header";
import type { TestReads } from "./test-reads";
import type { AnswerContamination } from "./answer-contamination";
import type { AgenticReportSection } from "../episodes/report-agentic";
import { unitsText } from "./export-stats";
import { dpoSection, type DpoReportSection, type DpoRoundSummary } from "./report-dpo";
import { grpoSection, type GrpoReportSection } from "./report-grpo";
import { noVerdictSection, type NoVerdictSection } from "./report-missing";
import type { AnswerParsing } from "./report-parsing";
import { outcomeScore, passed, samplesSection, type SamplesSection } from "./report-samples";
import {
  category,
  isolationCounts,
  taskViews,
  type IsolationCount,
  type PairCategory,
  type TaskOutcome,
  type TaskView,
} from "./report-tasks";

// The paired report (brief §2, §7) as plain data; pages, share links and exports render it.

export type { PairCategory, TaskOutcome } from "./report-tasks";
export type PairedRow = {
  split: "dev" | "test";
  taskId: string;
  group: string;
  /** The task's declared cluster, the unit of dependence where declared. */
  cluster?: string;
  base: string;
  sft: string;
  category: PairCategory;
  /** Multi-sample evaluations: the pass rates paired (base and sft then hold sample 0's verdict). */
  baseRate?: number;
  sftRate?: number;
};

export type ExperimentReport = {
  /** 2: clustered tests, studentized cluster-bootstrap intervals, a dev row without inference. */
  version: 2;
  experimentId: string;
  name: string;
  generatedAt: string;
  config: ExperimentConfig;
  disclaimer: string | null;
  outcome: {
    kind: SelectionDecision["outcome"];
    selected: ModelRef;
    selectedLabel: string;
    headline: string;
    reason: string;
  };
  selection: Pick<SelectionDecision, "rule" | "table">;
  protocol: ProtocolCheck;
  /** Dev is descriptive only; test is the one inference. */
  summary: [DevSummaryRow, TestSummaryRow];
  methods: typeof STATS_METHODS;
  devCurve: DevCurve;
  seeds: PooledResult | null;
  contamination: LeakageReport;
  /** Dev tasks against the SFT data (a dev task trained on makes selection measure memorisation). */
  devContamination: LeakageReport | null;
  /** Pairs left out of every comparison because one side never got a grader verdict (infra errors, retried first). */
  excluded: ExcludedPairs[];
  tasks: PairedRow[];
  alpha: number;
  /** What was compared and how (absent in reports built before the header existed). */
  header?: ReportHeader;
  /** The per-task view on dev and test, excluded pairs included; never empty when the base is kept. */
  taskViews?: TaskView[];
  /** Verdicts per split and model, and how many came from in-process grading. */
  isolation?: IsolationCount[];
  /** Answers without a verdict per split and model, and base vs each model tested for asymmetry. */
  noVerdict?: NoVerdictSection;
  /** Answers per split and model that had no usable code block (graded as failures); absent in older reports. */
  parsing?: AnswerParsing[];
  /** n answers per task: pass@k, the rate-change histogram, MDE for n vs one sample. Absent for n = 1. */
  samples?: SamplesSection;
  /** sft+dpo: each round's pairs, the dev-best SFT and DPO models and their pairwise test comparisons. */
  dpo?: DpoReportSection;
  /** sft+grpo: the dev-best SFT and GRPO models and their pairwise test comparisons. */
  grpo?: GrpoReportSection;
  /** The split's test-read ledger: stored as it was at the build, refreshed on every read (absent before the ledger). */
  testReads?: TestReads;
  /** Test and dev references against every answer trained on (SFT, DPO); absent in reports built before it. */
  answerContamination?: AnswerContamination;
  /** Agentic pass@1 per policy on the dev tasks' stored episodes (descriptive); absent without episodes. */
  agentic?: AgenticReportSection;
};

export type ReportInput = {
  experimentId: string;
  name: string;
  generatedAt: string;
  config: ExperimentConfig;
  selection: SelectionDecision;
  /** The protocol each compared evaluation actually ran under, by model label. */
  protocols: Record<string, RecordedProtocol>;
  /** Tasks whose answer never got a verdict after the bounded grade retries, by split and modelKey. */
  noVerdict?: { dev: Record<string, string[]>; test: Record<string, string[]> };
  /** Dev outcomes by modelKey (base and every epoch). */
  dev: Record<string, TaskOutcome[]>;
  /** Test outcomes by modelKey: the base and each seed's best epoch on dev. */
  test: Record<string, TaskOutcome[]>;
  /** The adapter compared on test: the selected one, or each seed's best when the base is kept. */
  testAdapters: ModelRef[];
  contamination: LeakageReport;
  devContamination?: LeakageReport;
  header?: ReportHeader;
  /** sft+dpo: each round's start policy and pair statistics. */
  dpoRounds?: DpoRoundSummary[];
  testReads?: TestReads;
  answerContamination?: AnswerContamination;
  parsing?: AnswerParsing[];
};

/** One comparison's pairs without a verdict: excluded, never counted as failures. */
export type ExcludedPairs = {
  split: "dev" | "test";
  comparison: string;
  count: number;
  taskIds: string[];
  note: string;
};

function excludedPairs(
  split: "dev" | "test",
  comparison: string,
  keys: string[],
  missing: Record<string, string[]> | undefined,
): ExcludedPairs {
  const taskIds = [...new Set(keys.flatMap((k) => missing?.[k] ?? []))].sort();
  return {
    split,
    comparison,
    count: taskIds.length,
    taskIds,
    note: `${taskIds.length} pair${taskIds.length === 1 ? "" : "s"} excluded: no verdict`,
  };
}

export const ALPHA = 0.05;

// Only tasks with a verdict on both sides are paired: a missing verdict is an excluded pair (counted
// in `excluded`), never a failure.
function pairUp(split: "dev" | "test", base: readonly TaskOutcome[], sft: readonly TaskOutcome[]): PairedRow[] {
  const byId = new Map(sft.map((o) => [o.taskId, o]));
  return base.flatMap((b) => {
    const s = byId.get(b.taskId);
    if (!s) return [];
    const [x, y] = [outcomeScore(b), outcomeScore(s)];
    return [
      {
        split,
        taskId: b.taskId,
        group: b.group,
        ...(b.cluster !== undefined ? { cluster: b.cluster } : {}),
        base: b.verdict,
        sft: s.verdict,
        category: category(x, y),
        ...(b.samples || s.samples ? { baseRate: x, sftRate: y } : {}),
      },
    ];
  });
}

const asPairs = (rows: readonly PairedRow[]) =>
  rows.map((r) => ({
    group: r.group,
    cluster: r.cluster,
    base: r.baseRate ?? passed(r.base),
    treated: r.sftRate ?? passed(r.sft),
  }));
const asOutcomes = (xs: readonly TaskOutcome[]) =>
  xs.map((o) => ({ group: o.group, cluster: o.cluster, pass: outcomeScore(o) }));

/** Throws PRECONDITION_FAILED when the compared evaluations ran under different protocols. */
export function buildReport(input: ReportInput): ExperimentReport {
  assertSameProtocol(input.protocols);
  const { selection, config } = input;
  const boot = config.bootstrap;
  const baseDev = input.dev.base ?? [];
  const baseTest = input.test.base ?? [];
  const kept = selection.outcome === "base_kept";
  // On dev the selected adapter (or, when the base is kept, the best adapter) is shown for context.
  const devRival = kept
    ? (selection.table.filter((r) => r.ref.model === "adapter").sort((a, b) => b.pass1 - a.pass1)[0]?.ref ?? null)
    : selection.selected;
  const devSft = devRival ? (input.dev[modelKey(devRival)] ?? []) : null;
  const devRows = devSft ? pairUp("dev", baseDev, devSft) : [];
  const testSft = kept ? null : (input.test[modelKey(selection.selected)] ?? []);
  const testRows = testSft ? pairUp("test", baseTest, testSft) : [];
  const stats = { ...boot, alpha: ALPHA };
  const testRow = testSummary(
    testSft ? asPairs(testRows) : null,
    asOutcomes(baseTest),
    testSft ? asOutcomes(testSft) : null,
    kept ? null : modelLabel(selection.selected),
    stats,
  );
  const summary: [DevSummaryRow, TestSummaryRow] = [
    devSummary(
      devSft ? asPairs(devRows) : null,
      asOutcomes(baseDev),
      devSft ? asOutcomes(devSft) : null,
      devRival ? `${modelLabel(devRival)}${kept ? " (best adapter, not selected)" : ""}` : null,
    ),
    testRow,
  ];

  const seedRefs = input.testAdapters
    .filter((r): r is Extract<ModelRef, { model: "adapter" }> => r.model === "adapter")
    .sort((a, b) => a.seedIndex - b.seedIndex);
  const seeds =
    seedRefs.length > 0
      ? poolSeeds(
          // Tasks with a verdict for the base and every seed only; the rest are counted in `excluded`.
          baseTest.flatMap((b) => {
            const outcomes = seedRefs.map((r) => (input.test[modelKey(r)] ?? []).find((o) => o.taskId === b.taskId));
            if (outcomes.some((o) => o === undefined)) return [];
            return [
              {
                taskId: b.taskId,
                group: b.group,
                cluster: b.cluster,
                base: outcomeScore(b),
                bySeed: outcomes.map((o) => (o ? outcomeScore(o) : 0)),
              },
            ];
          }),
          seedRefs.map((r) => r.seed),
          stats,
        )
      : null;

  const headline = testHeadline(testRow, kept ? null : modelLabel(selection.selected));
  const side = (split: "dev" | "test", ref: ModelRef) => ({
    split,
    modelKey: modelKey(ref),
    label: modelLabel(ref),
    outcomes: input[split][modelKey(ref)] ?? [],
  });
  const testRefs: ModelRef[] = [{ model: "base" }, ...(kept ? seedRefs : [selection.selected])];
  const samples = samplesSection(
    config,
    [
      side("dev", { model: "base" }),
      ...(devRival ? [side("dev", devRival)] : []),
      ...testRefs.filter((r) => input.test[modelKey(r)]).map((r) => side("test", r)),
    ],
    testSft ? { label: `base vs ${modelLabel(selection.selected)}`, base: baseTest, treated: testSft } : null,
    ALPHA,
  );

  return {
    version: 2,
    experimentId: input.experimentId,
    name: input.name,
    generatedAt: input.generatedAt,
    config,
    disclaimer: config.disclaimer ?? null,
    outcome: {
      kind: selection.outcome,
      selected: selection.selected,
      selectedLabel: modelLabel(selection.selected),
      headline,
      reason: selection.reason,
    },
    selection: { rule: selection.rule, table: selection.table },
    protocol: checkProtocol(input.protocols),
    summary,
    methods: STATS_METHODS,
    devCurve: devCurveOf(selection.table),
    seeds,
    contamination: input.contamination,
    devContamination: input.devContamination ?? null,
    excluded: [
      ...(devRival
        ? [excludedPairs("dev", `base vs ${modelLabel(devRival)}`, ["base", modelKey(devRival)], input.noVerdict?.dev)]
        : []),
      ...(kept
        ? []
        : [
            excludedPairs(
              "test",
              `base vs ${modelLabel(selection.selected)}`,
              ["base", modelKey(selection.selected)],
              input.noVerdict?.test,
            ),
          ]),
      ...(seedRefs.length
        ? [excludedPairs("test", "per-seed pooled", ["base", ...seedRefs.map(modelKey)], input.noVerdict?.test)]
        : []),
    ],
    tasks: [...testRows, ...devRows],
    alpha: ALPHA,
    ...(input.header ? { header: input.header } : {}),
    taskViews: taskViews(input, selection.selected, devRival, kept),
    isolation: isolationCounts(input),
    noVerdict: noVerdictSection(input, ALPHA, selection.table),
    ...(samples ? { samples } : {}),
    ...(input.dpoRounds
      ? { dpo: dpoSection({ rounds: input.dpoRounds, table: selection.table, test: input.test, stats }) }
      : {}),
    ...(input.config.method === "sft+grpo"
      ? { grpo: grpoSection({ table: selection.table, test: input.test, stats }) }
      : {}),
    ...(input.testReads ? { testReads: input.testReads } : {}),
    ...(input.answerContamination ? { answerContamination: input.answerContamination } : {}),
    ...(input.parsing ? { parsing: input.parsing } : {}),
  };
}

const pp = (x: number) => `${(100 * x).toFixed(1)}`;

function testHeadline(t: TestSummaryRow, selected: string | null): string {
  if (selected === null)
    return `Base kept: no adapter beat the base on dev, so no gain is claimed. Base test pass@1 ${pp(t.base.value)}%.`;
  if (!t.stats || !t.sft) return "No test comparison available.";
  const d = t.stats;
  const sign = (x: number) => `${x >= 0 ? "+" : ""}${pp(x)}`;
  const unreliable = d.reliable ? "" : ` Only ${unitsText(d)}: the interval is unreliable.`;
  return `${selected} vs base on test: ${pp(t.sft.value)}% vs ${pp(t.base.value)}% pass@1, Δ ${sign(d.delta)} pp [${sign(d.ci[0])}, ${sign(d.ci[1])}] — ${t.label}.${unreliable}`;
}
