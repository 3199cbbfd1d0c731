"use client";

import type { ReactNode } from "react";
import { canAct, useViewer } from "../_lib/viewer";
import { Badge } from "./Badge";
import { Button } from "./Button";
import { ErrorBox } from "./ErrorBox";

// Archive / restore / delete for pools, splits, datasets and providers, the same on every page:
// each action asks first (window.confirm), archiving hides the item from lists and pickers,
// deleting is offered to admins only and the server refuses it while anything depends on it.

type Mutation = { mutate: () => void; isPending: boolean; error: unknown };

export function ArchiveControls({
  what,
  name,
  archivedAt,
  archive,
  restore,
  remove,
  archiveRole = "member",
  deleteNote,
}: {
  /** "pool", "split", …: used in the confirmation texts. */
  what: string;
  name: string;
  archivedAt: string | Date | null;
  archive: Mutation;
  restore: Mutation;
  /** Absent: this kind is never deleted. */
  remove?: Mutation;
  archiveRole?: "member" | "admin";
  /** Why deleting may be refused, shown in its confirmation. */
  deleteNote?: string;
}) {
  const viewer = useViewer();
  const archived = archivedAt !== null;
  const ask = (msg: string, m: Mutation) => window.confirm(msg) && m.mutate();
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center gap-2">
        {archived ? <Badge tone="amber">archived</Badge> : null}
        {canAct(viewer, archiveRole) ? (
          archived ? (
            <Button
              size="sm"
              disabled={restore.isPending}
              onClick={() => ask(`Restore ${what} "${name}"? It shows in lists and pickers again.`, restore)}
            >
              Restore
            </Button>
          ) : (
            <Button
              size="sm"
              disabled={archive.isPending}
              onClick={() =>
                ask(
                  `Archive ${what} "${name}"? It is hidden from lists and pickers (tick "show archived" to see it); nothing in it changes and it can be restored.`,
                  archive,
                )
              }
            >
              Archive
            </Button>
          )
        ) : null}
        {remove && canAct(viewer, "admin") ? (
          <Button
            size="sm"
            variant="danger"
            disabled={remove.isPending}
            onClick={() =>
              ask(
                `Delete ${what} "${name}" for good? This cannot be undone.${deleteNote ? ` ${deleteNote}` : ""}`,
                remove,
              )
            }
          >
            Delete
          </Button>
        ) : null}
      </div>
      <ErrorBox
        error={archive.error ?? restore.error ?? remove?.error ?? null}
        title={`Could not change the ${what}`}
      />
    </div>
  );
}

/** The "show archived" checkbox above a list. */
export function ShowArchived({ value, onChange }: { value: boolean; onChange: (v: boolean) => void }): ReactNode {
  return (
    <label className="flex items-center gap-1.5 text-xs text-zinc-600">
      <input type="checkbox" checked={value} onChange={(e) => onChange(e.target.checked)} />
      show archived
    </label>
  );
}
