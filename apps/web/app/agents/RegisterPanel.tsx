"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useTRPC } from "../_lib/trpc";
import type { AgentRow } from "../_lib/types";
import { changesSomething, registrationForm, registrationInput } from "./register";

const input =
  "h-8 w-full rounded-md border border-zinc-300 bg-white px-2.5 text-sm shadow-xs outline-none focus:border-zinc-500 focus:ring-2 focus:ring-zinc-200";

/** An admin's record of what the agent is: what the claim matches jobs against. */
export function RegisterPanel({ agent, onClose }: { agent: AgentRow; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [form, setForm] = useState(() => registrationForm(agent));
  const [invalid, setInvalid] = useState<string | null>(null);
  const register = useMutation(
    trpc.agents.register.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.agents.list.queryKey() }),
    }),
  );
  const parsed = registrationInput(agent.id, agent, form);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!parsed.ok) return setInvalid(parsed.error);
    setInvalid(null);
    register.mutate(parsed.input);
  };

  if (register.data) {
    return (
      <div className="space-y-3" data-testid="register-done">
        <p className="text-sm text-zinc-700">
          Recorded for <span className="font-medium">{agent.name}</span>:{" "}
          {register.data.appliedNow
            ? "the agent is connected and has been asked to say hello again, so it claims by the new record now."
            : "it claims by the new record from its next connect."}
        </p>
        <div className="flex justify-end">
          <Button variant="primary" onClick={onClose}>
            Done
          </Button>
        </div>
      </div>
    );
  }

  return (
    <form onSubmit={submit} className="space-y-3" data-testid="register-form">
      <p className="text-xs text-zinc-600">
        Jobs are matched against this record, not against what the agent reports: a label, the shell-job opt-in or a GPU
        it claims at connect counts only once recorded here. What it reported:{" "}
        {agent.capabilities
          ? `${agent.capabilities.gpus.length} GPU(s)${agent.capabilities.labels.length ? `, labels ${agent.capabilities.labels.join(", ")}` : ""}`
          : "nothing yet (never connected)"}
        .
      </p>
      <div className="grid gap-3 sm:grid-cols-[2fr_1fr_1fr]">
        <label className="block text-xs font-medium text-zinc-600">
          Labels <span className="font-normal text-zinc-400">(comma separated)</span>
          <input
            className={`${input} mt-1`}
            value={form.labels}
            onChange={(e) => setForm({ ...form, labels: e.target.value })}
            placeholder="a100, fast-disk"
          />
        </label>
        <label className="block text-xs font-medium text-zinc-600">
          GPUs
          <input
            className={`${input} mt-1`}
            inputMode="numeric"
            value={form.gpus}
            onChange={(e) => setForm({ ...form, gpus: e.target.value })}
            placeholder="unchanged"
          />
        </label>
        <label className="block text-xs font-medium text-zinc-600">
          GPU memory <span className="font-normal text-zinc-400">(GB each)</span>
          <input
            className={`${input} mt-1`}
            inputMode="decimal"
            value={form.gpuMemoryGb}
            onChange={(e) => setForm({ ...form, gpuMemoryGb: e.target.value })}
            placeholder="unchanged"
          />
        </label>
      </div>
      <label className="flex items-start gap-2 text-sm text-zinc-700">
        <input
          type="checkbox"
          className="mt-1"
          checked={form.shellJobs}
          onChange={(e) => setForm({ ...form, shellJobs: e.target.checked })}
        />
        <span>
          Shell jobs
          <span className="block text-xs text-zinc-500">
            Runs any command an admin queues, with that job&apos;s secret environment; only for a machine you trust with
            those secrets. The agent must also be started with --allow-shell-jobs.
          </span>
        </span>
      </label>
      <ErrorBox error={invalid ? new Error(invalid) : register.error} title="Could not record the registration" />
      <div className="flex justify-end gap-2">
        <Button variant="ghost" onClick={onClose}>
          Cancel
        </Button>
        <Button
          variant="primary"
          type="submit"
          disabled={register.isPending || (parsed.ok && !changesSomething(parsed.input))}
        >
          {register.isPending ? "Recording…" : "Record"}
        </Button>
      </div>
    </form>
  );
}
