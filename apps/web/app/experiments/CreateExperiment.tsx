"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent, type ReactNode } from "react";
import { Button } from "../_components/Button";
import { ErrorBox, FieldError } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { ExperimentConfig } from "@agentlab/core";
import { NAME_MAX_LENGTH } from "@agentlab/core/names";
import { useTRPC } from "../_lib/trpc";
import { defaultForm, toConfig, type ExperimentForm } from "./form";
import { AddOracle } from "../providers/AddOracle";
import { ModelPicker, useModelCheck } from "./ModelPicker";
import { EvaluationSamples } from "./EvaluationSamples";
import { DpoFields } from "./DpoFields";

const input = "h-8 w-full rounded-md border border-zinc-300 px-2 text-sm";

function Field({
  label,
  hint,
  path,
  error,
  children,
}: {
  label: string;
  hint?: string;
  path?: string;
  error?: unknown;
  children: ReactNode;
}) {
  return (
    <label className="block text-sm">
      <span className="mb-1 block text-xs font-medium text-zinc-600">{label}</span>
      {children}
      {hint ? <span className="mt-0.5 block text-xs text-zinc-400">{hint}</span> : null}
      {path ? <FieldError error={error} path={path} /> : null}
    </label>
  );
}

export function CreateExperiment() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const [f, setF] = useState<ExperimentForm>(defaultForm);
  const [formError, setFormError] = useState<Error | null>(null);
  const splits = useQuery(trpc.splits.list.queryOptions({}));
  const providers = useQuery(trpc.providers.list.queryOptions());
  const datasets = useQuery(trpc.datasets.list.queryOptions({}));
  const modelCheck = useModelCheck();
  const create = useMutation(
    trpc.experiments.create.mutationOptions({
      onSuccess: (e) => (
        void qc.invalidateQueries({ queryKey: trpc.experiments.list.queryKey() }), router.push(`/experiments/${e.id}`)
      ),
    }),
  );
  const set =
    <K extends keyof ExperimentForm>(k: K) =>
    (e: { target: { value: string } }) =>
      setF({ ...f, [k]: e.target.value as ExperimentForm[K] });
  const frozen = (splits.data ?? []).filter((s) => s.frozen);
  const splitDatasets = (datasets.data ?? []).filter((d) => d.splitId === f.splitId);

  // The base model is checked by an agent before the experiment starts (its facts size the jobs).
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFormError(null);
    try {
      // A recipe the server would refuse is not worth an agent's model check: send it as it is, and
      // the server's refusal names each bad field under its input.
      const draft = toConfig(f);
      if (!ExperimentConfig.safeParse(draft).success) return create.mutate(draft);
      const facts =
        modelCheck.factsFor(f.baseModel, f.baseRevision) ?? (await modelCheck.run(f.baseModel, f.baseRevision));
      create.mutate(toConfig(f, facts));
    } catch (err) {
      setFormError(err instanceof Error ? err : new Error(String(err)));
    }
  };

  return (
    <div className="space-y-5">
      <PageHeader
        title="New experiment"
        description="Everything that influences a number in the report is fixed here; the frozen split and this recipe reproduce it."
      />
      <ErrorBox error={formError ?? create.error ?? splits.error} />
      <form onSubmit={submit} className="space-y-5" aria-label="new experiment">
        <Section title="Split and data">
          <div className="grid gap-3 sm:grid-cols-2">
            <Field path="name" error={create.error} label="Name">
              <input
                className={input}
                name="name"
                value={f.name}
                onChange={set("name")}
                required
                maxLength={NAME_MAX_LENGTH}
              />
            </Field>
            <Field
              path="splitId"
              error={create.error}
              label="Frozen split"
              hint="Test tasks never reach a teacher or training."
            >
              <select className={input} name="splitId" value={f.splitId} onChange={set("splitId")} required>
                <option value="">split…</option>
                {frozen.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.poolName} / {s.name}
                  </option>
                ))}
              </select>
              {splits.data && frozen.length === 0 ? (
                <span className="mt-1 block text-xs text-amber-700">
                  No frozen split yet:{" "}
                  <Link className="underline" href="/splits">
                    create one from a pool
                  </Link>{" "}
                  first.
                </span>
              ) : null}
            </Field>
            <Field label="Training data">
              <select className={input} name="data" value={f.data} onChange={set("data")}>
                <option value="teacher">collect with a teacher (train+dev tasks)</option>
                <option value="dataset">reuse a verified SFT dataset of this split</option>
              </select>
            </Field>
            <Field path="teacher.providerId" error={create.error} label="Teacher provider">
              <select className={input} name="providerId" value={f.providerId} onChange={set("providerId")} required>
                <option value="">provider…</option>
                {(providers.data ?? []).map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name} ({p.kind === "reference" ? "reference oracle" : p.model})
                  </option>
                ))}
              </select>
              {providers.data && providers.data.length === 0 ? (
                <span className="mt-1 block">
                  <AddOracle onAdded={(pid) => setF((cur) => ({ ...cur, providerId: pid }))} />
                </span>
              ) : null}
            </Field>
            {f.data === "dataset" ? (
              <Field path="datasetId" error={create.error} label="SFT dataset">
                <select className={input} name="datasetId" value={f.datasetId} onChange={set("datasetId")} required>
                  <option value="">dataset…</option>
                  {splitDatasets.map((d) => (
                    <option key={d.id} value={d.id}>
                      {d.name} ({d.sampleCount} samples)
                    </option>
                  ))}
                </select>
              </Field>
            ) : (
              <div className="grid grid-cols-3 gap-2">
                <Field path="teacher.n" error={create.error} label="Samples per task (n)">
                  <input className={input} name="n" type="number" min={1} max={64} value={f.n} onChange={set("n")} />
                </Field>
                <Field path="teacher.sampling.temperature" error={create.error} label="Temperature">
                  <input
                    className={input}
                    name="temperature"
                    type="number"
                    step="0.1"
                    min={0}
                    max={2}
                    value={f.temperature}
                    onChange={set("temperature")}
                  />
                </Field>
                <Field path="teacher.budgetUsd" error={create.error} label="Budget $">
                  <input
                    className={input}
                    name="budget"
                    type="number"
                    step="any"
                    min={0}
                    placeholder="none"
                    value={f.budget}
                    onChange={set("budget")}
                  />
                </Field>
              </div>
            )}
          </div>
        </Section>
        <Section title="Base model and training">
          <div className="grid gap-3 sm:grid-cols-4">
            <div className="sm:col-span-4">
              <ModelPicker f={f} setF={setF} check={modelCheck} error={create.error} />
            </div>
            <Field path="training.epochs" error={create.error} label="Epochs">
              <input
                className={input}
                name="epochs"
                type="number"
                min={1}
                max={50}
                value={f.epochs}
                onChange={set("epochs")}
              />
            </Field>
            <Field path="training.learningRate" error={create.error} label="Learning rate">
              <input className={input} name="learningRate" value={f.learningRate} onChange={set("learningRate")} />
            </Field>
            <Field path="training.batchSize" error={create.error} label="Batch size">
              <input
                className={input}
                name="batchSize"
                type="number"
                min={1}
                value={f.batchSize}
                onChange={set("batchSize")}
              />
            </Field>
            <Field path="training.maxLength" error={create.error} label="Max length">
              <input
                className={input}
                name="maxLength"
                type="number"
                min={8}
                value={f.maxLength}
                onChange={set("maxLength")}
              />
            </Field>
            <Field path="training.lora.r" error={create.error} label="LoRA r">
              <input className={input} name="loraR" type="number" min={1} value={f.loraR} onChange={set("loraR")} />
            </Field>
            <Field path="training.lora.alpha" error={create.error} label="LoRA alpha">
              <input className={input} name="loraAlpha" value={f.loraAlpha} onChange={set("loraAlpha")} />
            </Field>
            <Field path="training.lora.targets" error={create.error} label="LoRA targets">
              <input className={input} name="targets" value={f.targets} onChange={set("targets")} />
            </Field>
            <Field path="training.quantization" error={create.error} label="Quantization">
              <select className={input} name="quantization" value={f.quantization} onChange={set("quantization")}>
                <option value="auto">auto</option>
                <option value="nf4">nf4 (QLoRA)</option>
                <option value="none">none</option>
              </select>
            </Field>
            <Field path="training.gradientCheckpointing" error={create.error} label="Gradient checkpointing">
              <select className={input} name="checkpointing" value={f.checkpointing} onChange={set("checkpointing")}>
                <option value="auto">auto (on for real models)</option>
                <option value="on">on</option>
                <option value="off">off</option>
              </select>
            </Field>
            <Field
              path="training.gpus"
              error={create.error}
              label="GPUs per run"
              hint="N > 1: N ranks on one agent with N free GPUs (a GPU method)."
            >
              <input
                className={input}
                name="gpus"
                type="number"
                min={1}
                max={64}
                value={f.gpus}
                onChange={set("gpus")}
              />
            </Field>
            <Field path="training.parallel" error={create.error} label="Multi-GPU sharing">
              <select className={input} name="parallel" value={f.parallel} onChange={set("parallel")}>
                <option value="ddp">ddp (a whole model per GPU)</option>
                <option value="fsdp">fsdp (the model sharded across GPUs)</option>
              </select>
            </Field>
          </div>
        </Section>
        <Section title="Method (SFT, or SFT then DPO)">
          <DpoFields f={f} setF={setF} error={create.error} />
        </Section>
        <Section title="Evaluation protocol and seeds">
          <div className="grid gap-3 sm:grid-cols-3">
            <Field
              path="evaluation.maxNewTokens"
              error={create.error}
              label="Max new tokens"
              hint="The same decoding for base and adapter."
            >
              <input
                className={input}
                name="maxNewTokens"
                type="number"
                min={1}
                value={f.maxNewTokens}
                onChange={set("maxNewTokens")}
              />
            </Field>
            <Field path="evaluation.graderVersion" error={create.error} label="Grader version">
              <input
                className={input}
                name="graderVersion"
                value={f.graderVersion}
                onChange={set("graderVersion")}
                required
              />
            </Field>
            <Field path="seeds" error={create.error} label="Seeds" hint="Comma-separated; one training run per seed.">
              <input className={input} name="seeds" value={f.seeds} onChange={set("seeds")} required />
            </Field>
          </div>
          <EvaluationSamples f={f} setF={setF} />
        </Section>
        <Button variant="primary" type="submit" disabled={create.isPending || modelCheck.busy !== null}>
          Create and start
        </Button>
      </form>
    </div>
  );
}
