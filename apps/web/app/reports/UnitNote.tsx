// What a comparison treated as independent and how its interval was made, next to each comparison
// (report and share pages). Reports built before units were declared carry only `groups`.

type UnitFacts = {
  groups: number;
  unit?: "cluster" | "source_group";
  units?: number;
  sourceGroups?: number;
  intervalMethod?: string;
};

export function unitText(s: UnitFacts): string {
  const units = s.units ?? s.groups;
  const what =
    s.unit === "cluster"
      ? `${units} cluster${units === 1 ? "" : "s"} (declared; ${s.sourceGroups ?? "?"} source groups)`
      : `${units} source group${units === 1 ? "" : "s"}`;
  return `unit: ${what}${s.intervalMethod ? ` · interval: ${s.intervalMethod}` : ""}`;
}

export function UnitNote({ stats }: { stats: UnitFacts }) {
  return (
    <span className="text-xs text-zinc-500" data-testid="unit-note">
      {unitText(stats)}
    </span>
  );
}
