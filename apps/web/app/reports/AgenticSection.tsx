"use client";

import { formatPct, type ExperimentReport } from "@agentlab/core";
import { Section } from "../_components/PageHeader";
import { Cell, Explain, StatTable } from "./StatsTables";

// The report's agentic rows: per policy, pass@1 over each dev task's episode seeds with the
// report's clustered interval, and the turns and test runs the episodes used. Dev only and
// descriptive (the episodes are no part of the test claim); the share page shows the same.

export function AgenticReport({ report }: { report: ExperimentReport }) {
  const section = report.agentic;
  if (!section?.rows.length) return null;
  return (
    <Section title="Agentic episodes (dev, descriptive)">
      <StatTable
        testId="agentic"
        head={[
          "policy",
          "tasks",
          "episodes",
          "seeds per task",
          "pass@1 [95% interval]",
          "mean turns",
          "mean test runs",
          "budget submits",
        ]}
      >
        {section.rows.map((r) => (
          <tr key={r.policy}>
            <Cell left>{r.policy}</Cell>
            <Cell>{r.tasks}</Cell>
            <Cell>{r.episodes}</Cell>
            <Cell>{r.seedsPerTask[0] === r.seedsPerTask[1] ? r.seedsPerTask[0] : r.seedsPerTask.join("–")}</Cell>
            <Cell>{`${formatPct(r.passAt1.value)} [${formatPct(r.passAt1.lo)}, ${formatPct(r.passAt1.hi)}]`}</Cell>
            <Cell>{r.meanTurns.toFixed(1)}</Cell>
            <Cell>{r.meanTestRuns.toFixed(1)}</Cell>
            <Cell>{r.budgetSubmits}</Cell>
          </tr>
        ))}
      </StatTable>
      <Explain>
        <p>{section.note}.</p>
        <p>
          An episode is a model–tool run in the sandbox: it reads files, edits, runs the public tests and submits to the
          judge. A budget submit is an episode the budget ended, not the policy.
        </p>
      </Explain>
    </Section>
  );
}
