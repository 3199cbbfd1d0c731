"use client";

import { pct, pp } from "../../client/format";
import { Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import type { RouterOutputs } from "../_lib/types";

// Power before cost, as `agentlab studies plan` prints it: per primary contrast the minimum
// detectable effect at 80% power (Holm's first step α/m and its last α), then the evaluation work
// and the time it takes at the lab's measured throughput.

export function StudyPlanView({ plan }: { plan: RouterOutputs["studies"]["plan"] }) {
  const w = plan.power;
  const e = plan.estimate;
  return (
    <Section title="Plan: power before cost">
      <p className="px-4 pt-3 text-sm" data-testid="study-plan-units">
        {w.testTasks} test tasks in {w.units} {w.unit === "cluster" ? "clusters" : "source groups"}; {w.seeds} seeds;{" "}
        {w.samplesPerTask} sample(s) per task; assumed: {pct(w.assumptions.changeRate)} of tasks change between arms,
        within-unit correlation {w.assumptions.withinUnitCorrelation}.
      </p>
      <Table
        bare
        rows={w.contrasts}
        rowKey={(c) => c.arms.join(" vs ")}
        columns={[
          { key: "arms", header: "Contrast", cell: (c) => `${c.arms[0]} vs ${c.arms[1]}` },
          {
            key: "holm",
            header: `MDE at ${100 * w.power}% power, α/${w.contrasts.length}`,
            cell: (c) => (c.mdeHolm === null ? "—" : pp(c.mdeHolm)),
          },
          {
            key: "alpha",
            header: `MDE at α = ${w.alpha}`,
            cell: (c) => (c.mdeAlpha === null ? "—" : pp(c.mdeAlpha)),
          },
        ]}
      />
      <ul className="px-4 pb-3 text-xs text-zinc-600">
        {w.notes.map((n) => (
          <li key={n}>note: {n}</li>
        ))}
        <li>
          evaluation work: {plan.work.answers} answers over {plan.arms.length} arms (dev {plan.work.dev.answers}, test{" "}
          {plan.work.test.answers});{" "}
          {e.kind === "estimate"
            ? `estimated ${(e.totalS / 3600).toFixed(2)} h of agent time (${e.note})`
            : `no time estimate: ${e.reason}`}
        </li>
      </ul>
    </Section>
  );
}
