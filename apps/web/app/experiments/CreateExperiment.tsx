"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useScrollToFirstFieldError } from "../_components/FieldLabels";
import { PageHeader, Section } from "../_components/PageHeader";
import { ExperimentConfig } from "@agentlab/core";
import { NAME_MAX_LENGTH } from "@agentlab/core/names";
import { useTRPC } from "../_lib/trpc";
import { defaultForm, toConfig, type ExperimentForm } from "./form";
import { AddOracle } from "../providers/AddOracle";
import { ModelPicker, useModelCheck } from "./ModelPicker";
import { EvaluationSamples } from "./EvaluationSamples";
import { DpoFields } from "./DpoFields";
import { GrpoFields } from "./GrpoFields";
import { Field, inputClass, setter } from "./FormField";
import { TrainingFields } from "./TrainingFields";
import { PromptVariantField } from "./PromptVariantField";
import { CpuDemoPreset } from "./CpuDemoPreset";

/** `preset: "cpu-demo"` (the checklist's first experiment) applies the CPU demo preset on arrival. */
export function CreateExperiment({ splitId, preset }: { splitId?: string; preset?: "cpu-demo" } = {}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const [f, setF] = useState<ExperimentForm>(() => (splitId ? { ...defaultForm, splitId } : defaultForm));
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
  const set = setter({ f, setF });
  useScrollToFirstFieldError(create.error);
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
      <CpuDemoPreset setF={setF} check={modelCheck} auto={preset === "cpu-demo"} />
      <ErrorBox error={formError ?? create.error ?? splits.error} />
      <form onSubmit={submit} className="space-y-5" aria-label="new experiment">
        <Section title="Split and data">
          <div className="grid gap-3 sm:grid-cols-2">
            <Field path="name" error={create.error} label="Name">
              <input
                className={inputClass}
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
              <select className={inputClass} name="splitId" value={f.splitId} onChange={set("splitId")} required>
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
              <select className={inputClass} name="data" value={f.data} onChange={set("data")}>
                <option value="teacher">collect with a teacher (train+dev tasks)</option>
                <option value="dataset">reuse a verified SFT dataset of this split</option>
              </select>
            </Field>
            <Field path="teacher.providerId" error={create.error} label="Teacher provider">
              <select
                className={inputClass}
                name="providerId"
                value={f.providerId}
                onChange={set("providerId")}
                required
              >
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
                <select
                  className={inputClass}
                  name="datasetId"
                  value={f.datasetId}
                  onChange={set("datasetId")}
                  required
                >
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
                  <input
                    className={inputClass}
                    name="n"
                    type="number"
                    min={1}
                    max={64}
                    value={f.n}
                    onChange={set("n")}
                  />
                </Field>
                <Field path="teacher.sampling.temperature" error={create.error} label="Temperature">
                  <input
                    className={inputClass}
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
                    className={inputClass}
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
            <TrainingFields f={f} setF={setF} error={create.error} />
          </div>
        </Section>
        <Section title="Method (SFT, or SFT then DPO or GRPO)">
          <DpoFields f={f} setF={setF} error={create.error} />
          <GrpoFields f={f} setF={setF} error={create.error} />
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
                className={inputClass}
                name="maxNewTokens"
                type="number"
                min={1}
                value={f.maxNewTokens}
                onChange={set("maxNewTokens")}
              />
            </Field>
            <Field path="evaluation.graderVersion" error={create.error} label="Grader version">
              <input
                className={inputClass}
                name="graderVersion"
                value={f.graderVersion}
                onChange={set("graderVersion")}
                required
              />
            </Field>
            <PromptVariantField which="evalPrompt" f={f} setF={setF} error={create.error} />
            <Field path="seeds" error={create.error} label="Seeds" hint="Comma-separated; one training run per seed.">
              <input className={inputClass} name="seeds" value={f.seeds} onChange={set("seeds")} required />
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
