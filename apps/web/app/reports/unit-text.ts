import { unitsText } from "@agentlab/core";

// What a comparison treated as independent and how its interval was made, next to each comparison
// (report and share pages; the Markdown export says the same through core's comparisonNote).
// Reports built before units were declared carry only `groups`.

export type UnitFacts = {
  groups: number;
  unit?: "cluster" | "source_group";
  units?: number;
  sourceGroups?: number;
  intervalMethod?: string;
};

export function unitText(s: UnitFacts): string {
  const units = unitsText({ unit: s.unit ?? "source_group", units: s.units ?? s.groups });
  const declared = s.unit === "cluster" ? ` (declared clusters over ${s.sourceGroups ?? "?"} source groups)` : "";
  return `unit: ${units}${declared}${s.intervalMethod ? ` · interval: ${s.intervalMethod}` : ""}`;
}
