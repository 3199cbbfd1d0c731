"use client";

import { useRouter } from "next/navigation";
import type { MouseEvent, ReactNode } from "react";

export type Column<T> = {
  key: string;
  header: ReactNode;
  cell: (row: T) => ReactNode;
  /** Extra classes for the header and cells of this column (width, alignment, visibility). */
  className?: string;
};

/** A dense, readable table; rows can carry an href (the whole row navigates) or an onClick. */
export function Table<T>({
  columns,
  rows,
  rowKey,
  rowHref,
  onRowClick,
  rowClassName,
  empty,
  bare = false,
}: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  rowHref?: (row: T) => string;
  onRowClick?: (row: T) => void;
  rowClassName?: (row: T) => string;
  empty?: ReactNode;
  /** No outer border, for tables that sit inside a card. */
  bare?: boolean;
}) {
  const router = useRouter();
  if (rows.length === 0 && empty) return <>{empty}</>;
  const clickable = Boolean(rowHref || onRowClick);
  return (
    <div className={`overflow-x-auto bg-white ${bare ? "" : "rounded-lg border border-zinc-200"}`}>
      <table className="w-full border-collapse text-left text-[13px]">
        <thead>
          <tr className="border-b border-zinc-200 bg-zinc-50/80">
            {columns.map((c) => (
              <th
                key={c.key}
                scope="col"
                className={`whitespace-nowrap px-3 py-2 text-[11px] font-semibold uppercase tracking-wide text-zinc-500 ${c.className ?? ""}`}
              >
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100">
          {rows.map((row) => {
            const href = rowHref?.(row);
            const go = (e: MouseEvent<HTMLTableRowElement>) => {
              // Links and buttons inside a row keep their own behaviour.
              if ((e.target as HTMLElement).closest("a, button, input, select, label")) return;
              if (onRowClick) onRowClick(row);
              else if (href) router.push(href);
            };
            return (
              <tr
                key={rowKey(row)}
                onClick={clickable ? go : undefined}
                className={`align-top ${clickable ? "cursor-pointer hover:bg-zinc-50" : ""} ${rowClassName?.(row) ?? ""}`}
              >
                {columns.map((c) => (
                  <td key={c.key} className={`px-3 py-2 ${c.className ?? ""}`}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
