// The demo's end: each report's figures, the human-readable lines and the one JSON line that
// names the three reports' files.
import type { ExperimentReport } from "@agentlab/core";
import type { AaControl } from "./aa-control";
import { DISCLAIMER } from "./options";
import type { DemoReport } from "./run-experiment";

export const figures = (r: ExperimentReport) => {
  const test = r.summary[1];
  // Base kept: no gain is claimed, but each seed's best adapter still ran on test; its paired
  // comparison (the report's per-seed row) shows the discordance the control produced.
  const s = test.stats ?? r.seeds?.perSeed[0]?.stats ?? null;
  return {
    outcome: r.outcome.kind,
    basePass: test.base.value,
    adapterPass: test.sft?.value ?? s?.treatedPass ?? null,
    compared: test.stats ? "selected adapter" : s ? "best adapter (base kept, not claimed)" : "none",
    delta: s?.delta ?? null,
    ci: s?.ci ?? null,
    p: s?.p ?? null,
    test: s?.test ?? null,
    unit: s?.unit ?? null,
    units: s?.units ?? null,
    intervalMethod: s?.intervalMethod ?? null,
    improved: s?.improved ?? null,
    regressed: s?.regressed ?? null,
    significant: test.significant,
    contamination: { exact: r.contamination.exactPairs, normalized: r.contamination.normalizedPairs },
    // Test references found among the training answers (the question-side check above cannot see it).
    answerContamination: r.answerContamination
      ? { testTasks: r.answerContamination.test.testTasks, leaked: r.answerContamination.test.testTasksWithLeak }
      : null,
  };
};

/** The three pairwise test comparisons of a DPO or GRPO section (base vs SFT, base vs it, SFT vs it). */
const comparisonFigures = (cs: NonNullable<ExperimentReport["dpo"]>["comparisons"]) =>
  cs.map((x) => ({
    a: x.aLabel,
    b: x.bLabel,
    aPass: x.row.base.value,
    bPass: x.row.sft?.value ?? null,
    delta: x.row.stats?.delta ?? null,
    ci: x.row.stats?.ci ?? null,
    p: x.row.stats?.p ?? null,
    label: x.row.label,
  }));

/** The sft+dpo report's figures: the rounds' pairs and the three pairwise test comparisons. */
const dpoFigures = (r: ExperimentReport) =>
  r.dpo
    ? {
        selected: r.outcome.selectedLabel,
        rounds: r.dpo.rounds.map((x) => ({ round: x.round, policy: x.policyLabel, stats: x.stats })),
        devPoints: r.dpo.devPoints,
        comparisons: comparisonFigures(r.dpo.comparisons),
      }
    : null;

/** The sft+grpo report's figures: the selected models and the three pairwise test comparisons. */
const grpoFigures = (r: ExperimentReport | undefined) =>
  r?.grpo ? { selected: r.outcome.selectedLabel, comparisons: comparisonFigures(r.grpo.comparisons) } : null;

export type DemoEnd = {
  wallSeconds: number;
  baseCached: boolean;
  dataDir: string;
  main: DemoReport;
  control: DemoReport | undefined;
  aa: AaControl | null;
  shareToken: string;
};

/** The human-readable summary, then the one JSON line (the last line of the demo's output). */
/** What the report claims: a selected adapter's test is significant or not; a kept base claims nothing. */
const claim = (f: ReturnType<typeof figures>) =>
  f.compared !== "selected adapter" ? "no gain claimed" : f.significant ? "significant" : "not significant";

export function printDemoEnd({ wallSeconds, baseCached, dataDir, main, control, aa, shareToken }: DemoEnd): void {
  const m = figures(main.body);
  const c = control ? figures(control.body) : null;
  const pct = (x: number | null) => (x === null ? "n/a" : `${(100 * x).toFixed(1)}%`);
  const pp = (x: number | null) => (x === null ? "n/a" : `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)} pp`);
  console.log(`\n${DISCLAIMER}\n`);
  console.log(
    `main:    base ${pct(m.basePass)} → adapter ${pct(m.adapterPass)}, Δ ${pp(m.delta)} [${m.ci?.map(pp).join(", ") ?? "n/a"}], p = ${String(m.p)} (${m.test ?? "no test"}), ${m.significant ? "significant" : "NOT significant"}; contamination test↔train exact ${m.contamination.exact}, normalized ${m.contamination.normalized}; test answers found in training answers: ${m.answerContamination ? `${m.answerContamination.leaked} of ${m.answerContamination.testTasks}` : "n/a"}`,
  );
  if (c)
    console.log(
      `control: base ${pct(c.basePass)} → ${c.compared} ${pct(c.adapterPass)}, Δ ${pp(c.delta)} [${c.ci?.map(pp).join(", ") ?? "n/a"}], p = ${String(c.p)} (${c.test ?? "no test"}), ${claim(c)}`,
    );
  const dpo = dpoFigures(main.body);
  const grpo = { main: grpoFigures(main.body), control: grpoFigures(control?.body) };
  const sections: [string, ReturnType<typeof comparisonFigures> | undefined][] = [
    ["dpo:    ", dpo?.comparisons],
    ["grpo:   ", grpo.main?.comparisons],
    ["grpo control (shuffled rewards):", grpo.control?.comparisons],
  ];
  for (const [tag, cmps] of sections)
    for (const cmp of cmps ?? [])
      console.log(
        `${tag} ${cmp.a} ${pct(cmp.aPass)} vs ${cmp.b} ${pct(cmp.bPass)}, Δ ${pp(cmp.delta)} [${cmp.ci?.map(pp).join(", ") ?? "n/a"}], p = ${String(cmp.p)}, ${cmp.label}`,
      );
  if (aa)
    console.log(
      `A/A:     ${aa.body.comparison}: ${pct(aa.body.stats.basePass)} vs ${pct(aa.body.stats.treatedPass)}, Δ ${pp(aa.body.stats.delta)} [${aa.body.stats.ci.map(pp).join(", ")}], p = ${String(aa.body.stats.p)} (${aa.body.stats.test}), ${aa.body.stats.improved + aa.body.stats.regressed} discordant, ${aa.body.stats.significant ? "significant" : "not significant"}`,
    );
  console.log(
    `report JSON:  ${main.file}\ncontrol JSON: ${control?.file ?? "(skipped)"}\nA/A JSON:     ${aa?.file ?? "(skipped)"}`,
  );
  console.log(
    `report URL:   http://localhost:3000/reports/${main.id}  (serve it with: AGENTLAB_DATA_DIR=${dataDir} npm start)`,
  );
  console.log(`share URL:    http://localhost:3000/share/${shareToken}  (read-only, no login)`);
  console.log(
    JSON.stringify({
      demo: "ok",
      synthetic: true,
      wallSeconds,
      baseCached,
      reportId: main.id,
      reportJson: main.file,
      controlReportJson: control?.file ?? null,
      aaReportJson: aa?.file ?? null,
      main: m,
      control: c,
      aa: aa
        ? {
            delta: aa.body.stats.delta,
            ci: aa.body.stats.ci,
            p: aa.body.stats.p,
            units: aa.body.stats.units,
            discordant: aa.body.stats.improved + aa.body.stats.regressed,
            significant: aa.body.stats.significant,
          }
        : null,
      dpo,
      grpo: grpo.main ? grpo : null,
    }),
  );
}
