"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { ErrorBox, FieldError } from "../_components/ErrorBox";
import { Section } from "../_components/PageHeader";
import { useTRPC } from "../_lib/trpc";

const splitTags = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean);

/** Tags and notes of a run (they annotate it in the runs table) and its archive switch. */
export function RunNotes({
  id,
  tags,
  notes,
  archived,
  running,
  canAlter,
}: {
  id: string;
  tags: string[];
  notes: string;
  archived: boolean;
  running: boolean;
  canAlter: boolean;
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  // An unsaved edit; without one the form shows the server's copy (after a save, or another user's edit).
  const [draft, setDraft] = useState<{ tags: string; notes: string } | null>(null);
  const tagText = draft?.tags ?? tags.join(", ");
  const noteText = draft?.notes ?? notes;
  const dirty = draft !== null;
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: trpc.experiments.byId.queryKey({ id }) });
    void qc.invalidateQueries({ queryKey: trpc.runs.list.queryKey() });
  };
  const save = useMutation(trpc.runs.annotate.mutationOptions({ onSuccess: () => (setDraft(null), refresh()) }));
  const archive = useMutation(trpc.runs.archive.mutationOptions({ onSuccess: refresh }));
  const toggleArchive = () => {
    const msg = archived
      ? "Restore this run to the runs table?"
      : "Archive this run? It leaves the runs table (tick 'archived' to see it); its jobs, data and report are kept.";
    if (window.confirm(msg)) archive.mutate({ id, archived: !archived });
  };
  return (
    <Section
      title="Tags and notes"
      actions={
        canAlter ? (
          <Button
            size="sm"
            variant={archived ? "secondary" : "danger"}
            disabled={running && !archived}
            title={running ? "cancel or finish the run first" : undefined}
            onClick={toggleArchive}
          >
            {archived ? "Restore" : "Archive"}
          </Button>
        ) : null
      }
    >
      {archived ? <p className="mb-2 text-xs text-amber-700">Archived: hidden from the runs table.</p> : null}
      {canAlter ? (
        <form
          className="space-y-2"
          aria-label="tags and notes"
          onSubmit={(e) => (e.preventDefault(), save.mutate({ id, tags: splitTags(tagText), notes: noteText }))}
        >
          <label className="block text-sm">
            <span className="mb-1 block text-xs font-medium text-zinc-600">Tags (comma or space separated)</span>
            <input
              className="h-8 w-full rounded-md border border-zinc-300 px-2 text-sm"
              name="tags"
              value={tagText}
              onChange={(e) => setDraft({ tags: e.target.value, notes: noteText })}
              placeholder="baseline, lr:2e-4"
            />
            <FieldError error={save.error} path="tags" />
          </label>
          <label className="block text-sm">
            <span className="mb-1 block text-xs font-medium text-zinc-600">Notes</span>
            <textarea
              className="min-h-20 w-full rounded-md border border-zinc-300 p-2 text-sm"
              name="notes"
              value={noteText}
              onChange={(e) => setDraft({ tags: tagText, notes: e.target.value })}
            />
            <FieldError error={save.error} path="notes" />
          </label>
          <div className="flex items-center gap-2">
            <Button type="submit" size="sm" disabled={save.isPending || !dirty}>
              Save
            </Button>
            {save.isSuccess && !dirty ? <span className="text-xs text-emerald-700">saved</span> : null}
          </div>
        </form>
      ) : (
        <div className="space-y-2 text-sm">
          <div className="flex flex-wrap gap-1">
            {tags.length ? (
              tags.map((t) => (
                <Badge key={t} tone="violet">
                  {t}
                </Badge>
              ))
            ) : (
              <span className="text-zinc-400">no tags</span>
            )}
          </div>
          <p className="whitespace-pre-wrap text-zinc-700">{notes || "no notes"}</p>
        </div>
      )}
      <ErrorBox error={archive.error} title="Not archived" />
    </Section>
  );
}
