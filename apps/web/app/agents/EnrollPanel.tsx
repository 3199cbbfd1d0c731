"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Button } from "../_components/Button";
import { CopyButton } from "../_components/CopyButton";
import { ErrorBox } from "../_components/ErrorBox";
import { timestamp } from "../../client/format";
import { useTRPC } from "../_lib/trpc";
import { enrollRecipe, parseLabels, unreachableFromOtherBoxes } from "./enroll";

const input =
  "h-8 w-full rounded-md border border-zinc-300 bg-white px-2.5 text-sm shadow-xs outline-none focus:border-zinc-500 focus:ring-2 focus:ring-zinc-200";

export function EnrollPanel({ onClose }: { onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [labels, setLabels] = useState("");
  const [ttl, setTtl] = useState(60);
  const create = useMutation(
    trpc.agents.createEnrollmentToken.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.agents.list.queryKey() }),
    }),
  );

  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name: name.trim(), labels: parseLabels(labels), ttlMinutes: ttl });
  };

  if (create.data) {
    const cmd = enrollRecipe(window.location.origin, create.data.token);
    const local = unreachableFromOtherBoxes(window.location.origin);
    return (
      <div className="space-y-3">
        <p className="text-sm text-zinc-700">
          Run these three lines in a checkout of agentlab on the machine that should become an agent (install, enroll,
          run). The token works once and expires at{" "}
          <span className="font-medium">{timestamp(create.data.expiresAt)}</span>.
        </p>
        {local && (
          <div
            className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-xs text-red-900"
            data-testid="enroll-localhost-warning"
          >
            This page was opened as {window.location.origin}: another machine cannot reach that address. For a GPU box,
            open the dashboard by its network name or IP (or set AGENTLAB_PUBLIC_URL) and create the token there; on
            this machine it works as is.
          </div>
        )}
        <div className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900">
          This is the only time the token is shown; only its hash is stored.
        </div>
        <div className="flex items-stretch gap-2">
          <pre
            className="flex-1 overflow-x-auto rounded-md bg-zinc-900 px-3 py-2 font-mono text-[12px] text-zinc-100"
            data-testid="enroll-command"
          >
            {cmd}
          </pre>
          <CopyButton text={cmd} size="md" />
        </div>
        <div className="flex justify-end">
          <Button variant="primary" onClick={onClose}>
            Done
          </Button>
        </div>
      </div>
    );
  }

  return (
    <form onSubmit={submit} className="space-y-3">
      <div className="grid gap-3 sm:grid-cols-[2fr_2fr_1fr]">
        <label className="block text-xs font-medium text-zinc-600">
          Agent name
          <input
            className={`${input} mt-1`}
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="gpu-box-1"
            required
            maxLength={100}
            autoFocus
          />
        </label>
        <label className="block text-xs font-medium text-zinc-600">
          Labels <span className="font-normal text-zinc-400">(comma separated)</span>
          <input
            className={`${input} mt-1`}
            value={labels}
            onChange={(e) => setLabels(e.target.value)}
            placeholder="a100, fast-disk"
          />
        </label>
        <label className="block text-xs font-medium text-zinc-600">
          Expires in (min)
          <input
            className={`${input} mt-1`}
            type="number"
            min={1}
            max={7 * 24 * 60}
            value={ttl}
            onChange={(e) => setTtl(Number(e.target.value))}
          />
        </label>
      </div>
      <ErrorBox error={create.error} title="Could not create the token" />
      <div className="flex justify-end gap-2">
        <Button variant="ghost" onClick={onClose}>
          Cancel
        </Button>
        <Button variant="primary" type="submit" disabled={create.isPending || !name.trim()}>
          {create.isPending ? "Creating…" : "Create token"}
        </Button>
      </div>
    </form>
  );
}
