"use client";

import { useState } from "react";
import type { SideBySideRow } from "@agentlab/core/experiments/compare";
import { Section } from "../../_components/PageHeader";

/** Every recipe or protocol field of the compared runs, the differing rows highlighted. */
export function RecipeDiff({
  title,
  names,
  rows,
  testId,
}: {
  title: string;
  names: string[];
  rows: SideBySideRow[];
  testId: string;
}) {
  const [onlyDiff, setOnlyDiff] = useState(true);
  const differing = rows.filter((r) => r.differs).length;
  const shown = onlyDiff ? rows.filter((r) => r.differs) : rows;
  return (
    <Section
      title={`${title} (${differing} of ${rows.length} fields differ)`}
      actions={
        <label className="flex items-center gap-1 text-xs text-zinc-600">
          <input type="checkbox" checked={onlyDiff} onChange={(e) => setOnlyDiff(e.target.checked)} /> only differences
        </label>
      }
    >
      {shown.length === 0 ? (
        <p className="text-sm text-zinc-500" data-testid={testId}>
          {rows.length === 0 ? "Not recorded (no report yet)." : "Identical in every compared run."}
        </p>
      ) : (
        <div className="max-h-[420px] overflow-auto">
          <table className="w-full border-collapse text-left text-[12px]" aria-label={title} data-testid={testId}>
            <thead className="sticky top-0 bg-white">
              <tr className="border-b border-zinc-200">
                <th scope="col" className="px-2 py-1 text-[11px] font-semibold uppercase text-zinc-500">
                  Field
                </th>
                {names.map((n, i) => (
                  <th key={`${n}-${i}`} scope="col" className="px-2 py-1 text-xs font-medium">
                    {n}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-100">
              {shown.map((r) => (
                <tr key={r.field} className={r.differs ? "bg-amber-50" : ""} data-differs={r.differs}>
                  <th
                    scope="row"
                    className="whitespace-nowrap px-2 py-1 font-mono text-[11px] font-normal text-zinc-600"
                  >
                    {r.field}
                  </th>
                  {r.values.map((v, i) => (
                    <td key={i} className="max-w-[280px] truncate px-2 py-1 font-mono text-[11px]" title={v ?? ""}>
                      {v ?? <span className="text-zinc-400">—</span>}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
