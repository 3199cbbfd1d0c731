"use client";

import type { ExperimentReport } from "@agentlab/core";
import { Section } from "../_components/PageHeader";
import { grpoDevSeries, grpoThreeWay } from "../_lib/dpo-report";
import { ArmDevCurve, ThreeWayTable } from "./DpoSection";
import { Explain } from "./StatsTables";

// The sft+grpo part of the report: base, the dev-best SFT epoch and the dev-best GRPO snapshot
// compared pairwise on test with the clustered statistics, and dev pass@1 of every snapshot. Every
// figure is the stored report's; the share page shows the same.

export function GrpoReport({ report }: { report: ExperimentReport }) {
  const section = report.grpo;
  if (!section) return null;
  const three = grpoThreeWay(section);
  return (
    <Section title="Base, SFT and GRPO (test, pairwise; 95% intervals clustered by the report's unit)">
      <div className="space-y-4" data-testid="grpo-report">
        <ThreeWayTable section={three} testId="grpo" />
        <Explain>
          <p>{section.note}</p>
          <p>
            The SFT model is dev&apos;s best SFT epoch and the GRPO model dev&apos;s best GRPO snapshot, each within its
            kind (a tie keeps the earlier); the experiment&apos;s own selection (base before SFT before GRPO on a tie)
            is the outcome above. Δ is B − A in percentage points.
          </p>
        </Explain>
        <div>
          <h3 className="mb-1 text-xs font-medium text-zinc-500">
            Dev pass@1 by GRPO snapshot (selection: no inference)
          </h3>
          <ArmDevCurve report={report} section={three} series={grpoDevSeries(section.devPoints)} testId="grpo" />
        </div>
      </div>
    </Section>
  );
}
