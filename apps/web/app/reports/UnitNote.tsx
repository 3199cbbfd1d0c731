import { unitText, type UnitFacts } from "./unit-text";

export function UnitNote({ stats }: { stats: UnitFacts }) {
  return (
    <span className="text-xs text-zinc-500" data-testid="unit-note">
      {unitText(stats)}
    </span>
  );
}
