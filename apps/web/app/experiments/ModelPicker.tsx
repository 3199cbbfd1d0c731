"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { isTerminal } from "@agentlab/core/jobs/schemas";
import {
  estimateGenerateMemory,
  estimateText,
  estimateTrainMemory,
  memoryRefusal,
  modelShape,
  TRAINER_LOSS_CHUNK,
  trainFitHint,
  type InspectModelSummary,
  type TrainRecipe,
} from "@agentlab/core";
import { Button } from "../_components/Button";
import { FieldError } from "../_components/ErrorBox";
import { describeError } from "../../client/errors";
import { useTRPC } from "../_lib/trpc";
import type { RouterOutputs } from "../_lib/types";
import type { ExperimentForm } from "./form";

// The base-model picker: recent models, a local folder or hub id checked by an
// agent (the `inspect-model` job) before the experiment starts, the facts it found with the memory
// estimate of the recipe, and a "build the tiny demo model" action (a `tiny-model` job).

const input = "h-8 w-full rounded-md border border-zinc-300 px-2 text-sm";
/** A check nobody claims within this time has no agent to run it. */
const UNCLAIMED_MS = 120_000;

type ModelJobView = RouterOutputs["models"]["job"];
type Check = { key: string; facts: InspectModelSummary | null; error: string | null; agentName: string | null };
const keyOf = (ref: string, revision: string) => `${ref.trim()}@${revision.trim()}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const warmupText = (w: NonNullable<ModelJobView["warmup"]>, agent: string | null) =>
  `warming the base up on ${agent ?? "an agent"}: step ${w.step} of ${w.totalSteps}, about ${Math.max(1, Math.round(w.etaS / 60))} min left…`;

/** Runs picker jobs and waits for their end; `factsFor` is the last successful check of exactly that ref. */
export function useModelCheck() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const inspect = useMutation(trpc.models.inspect.mutationOptions());
  const buildTiny = useMutation(trpc.models.buildTiny.mutationOptions());
  const [check, setCheck] = useState<Check | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const waitFor = async (jobId: string, onView?: (view: ModelJobView) => void) => {
    const started = Date.now();
    for (;;) {
      const view = await qc.fetchQuery({ ...trpc.models.job.queryOptions({ jobId }), staleTime: 0 });
      if (isTerminal(view.state)) return view;
      if (view.state === "queued" && Date.now() - started > UNCLAIMED_MS)
        throw new Error("no agent took the check within 2 minutes: is an agent online (Agents page)?");
      onView?.(view);
      await sleep(700);
    }
  };

  const run = async (ref: string, revision: string): Promise<InspectModelSummary> => {
    const key = keyOf(ref, revision);
    setBusy("checking the model on an agent…");
    try {
      const { jobId } = await inspect.mutateAsync({ ref: ref.trim(), revision: revision.trim() || undefined });
      const view = await waitFor(jobId);
      if (view.state !== "succeeded" || !view.facts)
        throw new Error(view.error ?? `the check ended ${view.state} without facts`);
      setCheck({ key, facts: view.facts, error: null, agentName: view.agentName });
      return view.facts;
    } catch (err) {
      setCheck({ key, facts: null, error: describeError(err).message, agentName: null });
      throw err;
    } finally {
      setBusy(null);
    }
  };

  /** Waits for a tiny-model job (the picker's or the CPU demo's), showing its warm-up; resolves to its folder. */
  const awaitTiny = async (jobId: string): Promise<string> => {
    setBusy("building the tiny demo model on an agent…");
    try {
      const view = await waitFor(jobId, (v) => {
        if (v.warmup) setBusy(warmupText(v.warmup, v.agentName));
      });
      if (view.state !== "succeeded" || !view.tinyModel)
        throw new Error(view.error ?? `the build ended ${view.state} without a model`);
      return view.tinyModel.path;
    } finally {
      setBusy(null);
    }
  };

  /** Builds the tiny model on an agent; resolves to its folder there. */
  const tiny = async (splitId: string): Promise<string> => awaitTiny((await buildTiny.mutateAsync({ splitId })).jobId);

  return {
    busy,
    run,
    tiny,
    awaitTiny,
    factsFor: (ref: string, revision: string) => (check?.key === keyOf(ref, revision) ? check.facts : null),
    resultFor: (ref: string, revision: string) => (check?.key === keyOf(ref, revision) ? check : null),
  };
}

export type ModelCheck = ReturnType<typeof useModelCheck>;

export function ModelPicker({
  f,
  setF,
  check,
  error,
}: {
  f: ExperimentForm;
  setF: (next: (cur: ExperimentForm) => ExperimentForm) => void;
  check: ModelCheck;
  error: unknown;
}) {
  const trpc = useTRPC();
  const models = useQuery(trpc.runs.models.queryOptions());
  const target = useQuery(trpc.models.gpuTarget.queryOptions());
  const [actionError, setActionError] = useState<unknown>(null);
  const result = check.resultFor(f.baseModel, f.baseRevision);
  const isPath = f.baseModel.startsWith("/") || f.baseModel.startsWith(".");

  const verify = (ref: string, revision: string) => {
    setActionError(null);
    check.run(ref, revision).catch(() => undefined); // shown through `result`
  };
  const buildTiny = () => {
    setActionError(null);
    check
      .tiny(f.splitId)
      .then((path) => {
        setF((cur) => ({ ...cur, baseModel: path, baseRevision: "" }));
        verify(path, "");
      })
      .catch(setActionError);
  };

  return (
    <div className="space-y-2 text-sm">
      <div className="grid gap-2 sm:grid-cols-[1fr_12rem_auto]">
        <label className="block">
          <span className="mb-1 block text-xs font-medium text-zinc-600">Base model</span>
          <input
            className={input}
            name="baseModel"
            list="recent-models"
            value={f.baseModel}
            onChange={(e) => setF((cur) => ({ ...cur, baseModel: e.target.value }))}
            required
          />
          <datalist id="recent-models">
            {(models.data ?? []).map((m) => (
              <option key={m.ref} value={m.ref}>
                {m.source}
              </option>
            ))}
          </datalist>
          <span className="mt-0.5 block text-xs text-zinc-400">
            A folder on the agent's machine (starts with / or .) or a hub id from the agent's local cache (no
            downloads); earlier experiments' models are suggested.
          </span>
          <FieldError error={error} path="baseModel.ref" />
        </label>
        <label className="block">
          <span className="mb-1 block text-xs font-medium text-zinc-600">Hub revision</span>
          <input
            className={input}
            name="baseRevision"
            placeholder={isPath ? "— (local folder)" : "main"}
            disabled={isPath}
            value={f.baseRevision}
            onChange={(e) => setF((cur) => ({ ...cur, baseRevision: e.target.value }))}
          />
        </label>
        <div className="flex items-end gap-2 pb-5">
          <Button
            disabled={!f.baseModel.trim() || check.busy !== null}
            onClick={() => verify(f.baseModel, f.baseRevision)}
          >
            Check on an agent
          </Button>
          <Button
            disabled={!f.splitId || check.busy !== null}
            title={f.splitId ? undefined : "choose the split first: the tokenizer is fitted on its train tasks"}
            onClick={buildTiny}
          >
            Build the tiny demo model
          </Button>
        </div>
      </div>
      {check.busy ? <p className="text-xs text-zinc-500">{check.busy}</p> : null}
      {actionError ? <p className="text-xs text-red-700">{describeError(actionError).message}</p> : null}
      {result?.error ? (
        <p className="text-xs text-red-700" role="alert">
          {result.error}
        </p>
      ) : null}
      {result?.facts ? (
        <ModelFacts facts={result.facts} agentName={result.agentName} f={f} gpuMb={target.data?.gpuMemoryMb ?? null} />
      ) : null}
    </div>
  );
}

function ModelFacts({
  facts,
  agentName,
  f,
  gpuMb,
}: {
  facts: InspectModelSummary;
  agentName: string | null;
  f: ExperimentForm;
  gpuMb: number | null;
}) {
  const millions = (facts.parameters / 1e6).toFixed(facts.parameters < 1e7 ? 2 : 0);
  const rows: [string, string][] = [
    ["Architecture", `${facts.architecture} (${facts.model_type})`],
    ["Parameters", `${millions} M`],
    ["Layers · hidden · heads / kv", `${facts.layers} · ${facts.hidden_size} · ${facts.heads} / ${facts.kv_heads}`],
    ["Vocabulary · max positions", `${facts.vocab_size} · ${facts.max_positions ?? "—"}`],
    ["Stored dtype", facts.dtype ?? "—"],
    [
      "Tokenizer · chat template",
      `${facts.tokenizer ? "yes" : "missing"} · ${facts.chat_template ? "yes" : "missing"}`,
    ],
    [
      facts.source === "hub" ? "Resolved revision" : "Folder",
      facts.source === "hub" ? (facts.revision ?? "—") : facts.path,
    ],
    ["Checked on", `${agentName ?? "an agent"} in ${facts.inspect_s.toFixed(1)} s`],
  ];
  const memory = estimateForForm(facts, f, gpuMb);
  return (
    <div className="rounded-md border border-zinc-200 bg-zinc-50 p-3" aria-label="model facts">
      <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-0.5 text-xs">
        {rows.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="text-zinc-500">{k}</dt>
            <dd className="font-mono break-all">{v}</dd>
          </div>
        ))}
      </dl>
      {!facts.tokenizer || !facts.chat_template ? (
        <p className="mt-2 text-xs text-amber-700">
          Training needs a tokenizer with a chat template: this model cannot be fine-tuned as it is.
        </p>
      ) : null}
      {memory ? <MemoryLines {...memory} /> : null}
    </div>
  );
}

function MemoryLines({ lines }: { lines: { label: string; text: string; refusal: string | null }[] }) {
  return (
    <ul className="mt-2 space-y-0.5 text-xs" aria-label="memory estimate">
      {lines.map((l) => (
        <li key={l.label} className={l.refusal ? "text-red-700" : "text-zinc-600"}>
          <span className="font-medium">{l.label}:</span> {l.refusal ?? `≈ ${l.text}`}
        </li>
      ))}
    </ul>
  );
}

/** The GPU estimate of the form's current recipe (the method nf4 → QLoRA, otherwise bf16 LoRA on a GPU). */
function estimateForForm(facts: InspectModelSummary, f: ExperimentForm, gpuMb: number | null) {
  const n = (v: string) => Number(v);
  const batchSize = n(f.batchSize);
  const seqLength = n(f.maxLength);
  const maxNewTokens = n(f.maxNewTokens);
  const rank = n(f.loraR);
  if (![batchSize, seqLength, maxNewTokens, rank].every((x) => Number.isInteger(x) && x > 0)) return null;
  const targets = f.targets
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const shape = modelShape(facts);
  const recipe: TrainRecipe = {
    method: f.quantization === "nf4" ? "qlora-nf4" : "lora-bf16",
    loraRank: rank,
    loraTargets: targets,
    batchSize,
    seqLength,
    gradientCheckpointing: f.checkpointing !== "off",
    loss: { kind: "chunked", chunkTokens: TRAINER_LOSS_CHUNK },
  };
  try {
    const train = estimateTrainMemory(shape, recipe);
    const gen = estimateGenerateMemory(shape, {
      dtype: "bfloat16",
      batchSize: 8,
      promptTokens: seqLength,
      maxNewTokens,
      lora: { rank, targets },
    });
    const where = gpuMb === null ? " (no GPU agent enrolled to compare with)" : "";
    return {
      lines: [
        {
          label: `Training peak on a GPU (${recipe.method})${where}`,
          text: estimateText(train),
          refusal: gpuMb === null ? null : memoryRefusal(train, gpuMb, trainFitHint(recipe)),
        },
        {
          label: "Generation peak (bf16, batch 8)",
          text: estimateText(gen),
          refusal: gpuMb === null ? null : memoryRefusal(gen, gpuMb, "lower max new tokens or max length"),
        },
      ],
    };
  } catch (err) {
    return {
      lines: [{ label: "Memory estimate", text: "", refusal: err instanceof Error ? err.message : String(err) }],
    };
  }
}
