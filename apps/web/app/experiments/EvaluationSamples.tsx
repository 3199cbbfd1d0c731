"use client";

import { useQuery } from "@tanstack/react-query";
import type { ExperimentForm } from "./form";
import { useTRPC } from "../_lib/trpc";

// The form's multi-sample fields and, before anything starts, the work the evaluations
// ask for (tasks × samples × models, each answer generated and graded) with its time on the
// online agents from their recent measured throughput, or why there is no estimate.

const input = "h-8 w-full rounded-md border border-zinc-300 px-2 text-sm";

const duration = (s: number) =>
  s < 90 ? `${Math.round(s)} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;

function WorkEstimate({ f }: { f: ExperimentForm }) {
  const trpc = useTRPC();
  const samples = Math.max(1, Math.trunc(Number(f.evalSamples)) || 1);
  const seeds = f.seeds.split(",").filter((x) => x.trim()).length;
  const epochs = Math.trunc(Number(f.epochs)) || 0;
  const ready = Boolean(f.splitId) && seeds >= 1 && epochs >= 1 && samples <= 64;
  const q = useQuery({
    ...trpc.experiments.estimate.queryOptions({ splitId: f.splitId, samples, seeds: Math.min(seeds, 16), epochs }),
    enabled: ready,
  });
  if (!ready) return <p className="text-xs text-zinc-500">Pick a split to see the evaluation work.</p>;
  if (q.error) return <p className="text-xs text-red-700">No estimate: {q.error.message}</p>;
  if (!q.data) return <p className="text-xs text-zinc-500">Counting the work…</p>;
  const { work, estimate } = q.data;
  return (
    <div className="rounded border border-zinc-200 bg-zinc-50 p-2 text-xs text-zinc-700" data-testid="work-estimate">
      <p>
        Dev: {work.dev.tasks} tasks × {samples} samples × {work.dev.models} models = {work.dev.answers}; test:{" "}
        {work.test.tasks} × {samples} × {work.test.models} = {work.test.answers}.{" "}
        <strong>{work.answers} answers to generate and grade.</strong>
      </p>
      {estimate.kind === "estimate" ? (
        <p>
          About <strong>{duration(estimate.totalS)}</strong> on the online agents (generation{" "}
          {duration(estimate.generateS)}, grading {duration(estimate.gradeS)}), {estimate.note}.
        </p>
      ) : (
        <p>Time: {estimate.reason}.</p>
      )}
    </div>
  );
}

export function EvaluationSamples({ f, setF }: { f: ExperimentForm; setF: (f: ExperimentForm) => void }) {
  const sampled = Number(f.evalSamples) > 1;
  const set = (k: "evalSamples" | "evalTemperature" | "evalTopP") => (e: { target: { value: string } }) =>
    setF({ ...f, [k]: e.target.value });
  return (
    <div className="space-y-2">
      <div className="grid gap-3 sm:grid-cols-4">
        <label className="block text-sm">
          <span className="mb-1 block text-xs font-medium text-zinc-600">Samples per task</span>
          <input
            className={input}
            name="evalSamples"
            type="number"
            min={1}
            max={64}
            value={f.evalSamples}
            onChange={set("evalSamples")}
          />
          <span className="mt-0.5 block text-xs text-zinc-400">1: one greedy answer; more: pass rates and pass@k.</span>
        </label>
        <label className="block text-sm">
          <span className="mb-1 block text-xs font-medium text-zinc-600">Sampling temperature</span>
          <input
            className={input}
            name="evalTemperature"
            type="number"
            step="any"
            min={0.01}
            disabled={!sampled}
            value={f.evalTemperature}
            onChange={set("evalTemperature")}
          />
        </label>
        <label className="block text-sm">
          <span className="mb-1 block text-xs font-medium text-zinc-600">top_p</span>
          <input
            className={input}
            name="evalTopP"
            type="number"
            step="any"
            min={0.01}
            max={1}
            disabled={!sampled}
            value={f.evalTopP}
            onChange={set("evalTopP")}
          />
        </label>
        <label className="flex items-end gap-2 pb-1 text-xs text-zinc-600">
          <input
            type="checkbox"
            name="reuseAnswers"
            checked={f.reuseAnswers}
            onChange={(e) => setF({ ...f, reuseAnswers: e.target.checked })}
          />
          Reuse answers stored by earlier experiments under the same protocol
        </label>
      </div>
      <WorkEstimate f={f} />
    </div>
  );
}
