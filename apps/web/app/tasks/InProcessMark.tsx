"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";

// In-process grading is an explicit exception: an audit that found the task needs it refuses the
// task, and only an admin may allow it, with a reason that every later audit shows. Withdrawing the
// mark puts the task back in the isolated judge at once.

export function InProcessMark({
  taskId,
  marked,
  onMarked,
}: {
  taskId: string;
  /** The admin's current reason, when the task is marked. */
  marked: string | null;
  /** Re-audit after a change of the mark (the mark only takes effect with the next audit). */
  onMarked: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const viewer = useViewer();
  const [reason, setReason] = useState("");
  const mark = useMutation(
    trpc.audits.markInProcess.mutationOptions({
      onSuccess: onMarked,
      onSettled: () => queryClient.invalidateQueries(),
    }),
  );
  if (!canAct(viewer, "admin"))
    return <p className="text-xs text-zinc-600">An admin can allow in-process grading for this task, with a reason.</p>;
  return (
    <div className="flex flex-col gap-1" data-testid="in-process-mark">
      {mark.error ? <ErrorBox error={mark.error} /> : null}
      {marked ? (
        <span className="flex items-center gap-2 text-xs">
          Allowed in-process by an admin: {marked}
          <Button size="sm" disabled={mark.isPending} onClick={() => mark.mutate({ taskId, reason: null })}>
            Withdraw
          </Button>
        </span>
      ) : (
        <span className="flex items-center gap-2">
          <input
            className="w-80 rounded border border-zinc-300 px-2 py-1 text-xs"
            placeholder="why this task must be graded in-process (10+ characters)"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
          <Button
            size="sm"
            disabled={mark.isPending || reason.trim().length < 10}
            onClick={() => mark.mutate({ taskId, reason: reason.trim() })}
          >
            Allow in-process and re-audit
          </Button>
        </span>
      )}
    </div>
  );
}
