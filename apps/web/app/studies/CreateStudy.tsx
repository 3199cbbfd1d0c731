"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { checkStudyDefinition, type StudyDefinition } from "@agentlab/core";
import { NAME_MAX_LENGTH } from "@agentlab/core/names";
import { Button } from "../_components/Button";
import { ErrorBox, FieldError } from "../_components/ErrorBox";
import { useRegisterFieldLabel, useScrollToFirstFieldError } from "../_components/FieldLabels";
import { PageHeader, Section } from "../_components/PageHeader";
import { Field, inputClass } from "../experiments/FormField";
import { useTRPC } from "../_lib/trpc";
import type { RouterOutputs } from "../_lib/types";
import { ArmFields } from "./ArmFields";
import { StudyPlanView } from "./StudyPlanView";
import { FieldIssuesError, defaultStudyForm, toDefinition, type StudyForm } from "./form";

// A study from the browser: the same definition a study file holds, checked here by core's
// checkStudyDefinition exactly as `agentlab studies plan|create` check a file (one factor per
// arm, shared fields, contrasts naming arms), so a bad field is named by its label before any
// request; the server checks it again. "Plan" shows power and cost before anything runs.

type StudyPlan = RouterOutputs["studies"]["plan"];

/** Registers the label of a contrast's error path (one hook per contrast, so its own component). */
function ContrastLabel({ path, label }: { path: string; label: string }) {
  useRegisterFieldLabel(path, label);
  return null;
}

export function CreateStudy() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const [f, setF] = useState<StudyForm>(defaultStudyForm);
  const [localError, setLocalError] = useState<Error | null>(null);
  const [plan, setPlan] = useState<{ busy: boolean; error: unknown; data: StudyPlan | null }>({
    busy: false,
    error: null,
    data: null,
  });
  const splits = useQuery(trpc.splits.list.queryOptions({}));
  const providers = useQuery(trpc.providers.list.queryOptions());
  const datasets = useQuery(trpc.datasets.list.queryOptions({}));
  const create = useMutation(
    trpc.studies.create.mutationOptions({
      onSuccess: (s) => (
        void qc.invalidateQueries({ queryKey: trpc.studies.list.queryKey() }), router.push(`/studies/${s.id}`)
      ),
    }),
  );
  const error = localError ?? create.error ?? (plan.error || null);
  useScrollToFirstFieldError(error);
  const set =
    <K extends keyof StudyForm>(k: K) =>
    (e: { target: { value: string } }) =>
      setF({ ...f, [k]: e.target.value });
  const frozen = (splits.data ?? []).filter((s) => s.frozen);
  const splitDatasets = (datasets.data ?? []).filter((d) => d.splitId === f.splitId);

  /** The checked definition, or null with the refusal shown by field. */
  const checked = (): StudyDefinition | null => {
    setLocalError(null);
    const draft = toDefinition(f);
    if ("issues" in draft) return (setLocalError(new FieldIssuesError(draft.issues)), null);
    const r = checkStudyDefinition(draft.definition);
    if (!r.ok) return (setLocalError(new FieldIssuesError(r.issues)), null);
    return r.definition;
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const d = checked();
    if (d) create.mutate(d);
  };
  const runPlan = async () => {
    const d = checked();
    if (!d) return;
    setPlan({ busy: true, error: null, data: null });
    try {
      setPlan({ busy: false, error: null, data: await qc.fetchQuery(trpc.studies.plan.queryOptions(d)) });
    } catch (err) {
      setPlan({ busy: false, error: err, data: null });
    }
  };
  const refName = f.referenceName.trim() || "reference";

  return (
    <div className="space-y-5">
      <PageHeader
        title="New study"
        description="A reference arm and arms that each change one recipe field; shared split, base model, evaluation protocol and seeds; one test claim for all arms."
      />
      <ErrorBox error={error ?? splits.error} />
      {f.arms
        .filter((a) => a.primary)
        .map((a, k) => (
          <ContrastLabel key={`${k}:${a.name}`} path={`contrasts.${k}`} label={`Contrast ${a.name} vs ${refName}`} />
        ))}
      <form onSubmit={submit} className="space-y-5" aria-label="new study">
        <Section title="What every arm shares">
          <div className="grid gap-3 sm:grid-cols-3">
            <Field path="name" error={error} label="Study name">
              <input
                className={inputClass}
                name="name"
                value={f.name}
                onChange={set("name")}
                maxLength={NAME_MAX_LENGTH}
              />
            </Field>
            <Field path="splitId" error={error} label="Frozen split">
              <select className={inputClass} name="splitId" value={f.splitId} onChange={set("splitId")}>
                <option value="">split…</option>
                {frozen.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.poolName} / {s.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field path="baseModel" error={error} label="Base model" hint="A local folder or a hub id">
              <input className={inputClass} name="baseModel" value={f.baseModel} onChange={set("baseModel")} />
            </Field>
            <Field path="evaluation" error={error} label="Grader version">
              <input
                className={inputClass}
                name="graderVersion"
                value={f.graderVersion}
                onChange={set("graderVersion")}
              />
            </Field>
            <Field path="seeds" error={error} label="Training seeds" hint="Comma-separated; the same for every arm">
              <input className={inputClass} name="seeds" value={f.seeds} onChange={set("seeds")} />
            </Field>
            <Field path="alpha" error={error} label="α (family-wise, Holm)">
              <input className={inputClass} name="alpha" value={f.alpha} onChange={set("alpha")} />
            </Field>
          </div>
        </Section>
        <Section title="Reference arm">
          <div className="grid gap-3 sm:grid-cols-3">
            <Field path="reference.name" error={error} label="Reference name">
              <input
                className={inputClass}
                name="referenceName"
                value={f.referenceName}
                onChange={set("referenceName")}
              />
            </Field>
            <Field path="reference.recipe.teacher" error={error} label="Teacher provider">
              <select className={inputClass} name="providerId" value={f.providerId} onChange={set("providerId")}>
                <option value="">provider…</option>
                {(providers.data ?? []).map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field path="reference.recipe.datasetId" error={error} label="SFT snapshot" hint="Optional">
              <select className={inputClass} name="datasetId" value={f.datasetId} onChange={set("datasetId")}>
                <option value="">collect with the teacher</option>
                {splitDatasets.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.name} ({d.sampleCount} samples)
                  </option>
                ))}
              </select>
            </Field>
            <div className="sm:col-span-3">
              <Field
                path="reference.recipe"
                error={error}
                label="Reference recipe"
                hint='Further recipe fields as JSON, e.g. {"training": {"epochs": 2}}'
              >
                <textarea
                  className={`${inputClass} h-16 py-1 font-mono`}
                  name="referenceExtra"
                  value={f.referenceExtra}
                  onChange={set("referenceExtra")}
                />
              </Field>
            </div>
          </div>
        </Section>
        <Section title="Arms (one factor each)">
          <div className="p-4">
            <ArmFields f={f} setF={setF} error={error} />
            <FieldError error={error} path="contrasts" />
          </div>
        </Section>
        <Section title="Controls">
          <div className="grid gap-3 sm:grid-cols-3">
            <Field path="aa" error={error} label="A/A seeds" hint="Optional: the reference again under other seeds">
              <input className={inputClass} name="aaSeeds" value={f.aaSeeds} onChange={set("aaSeeds")} />
            </Field>
            <label className="flex items-center gap-1.5 pt-5 text-sm">
              <input
                type="checkbox"
                name="tokenMatching"
                checked={f.tokenMatching}
                onChange={(e) => setF({ ...f, tokenMatching: e.target.checked })}
              />
              Refuse arms with unequal supervised tokens
            </label>
            {f.tokenMatching ? (
              <Field path="tokenMatching" error={error} label="Token tolerance (%)">
                <input
                  className={inputClass}
                  name="tolerancePct"
                  value={f.tolerancePct}
                  onChange={set("tolerancePct")}
                />
              </Field>
            ) : null}
          </div>
        </Section>
        {plan.data ? <StudyPlanView plan={plan.data} /> : null}
        <div className="flex gap-2">
          <Button onClick={() => void runPlan()} disabled={plan.busy}>
            Plan power and cost
          </Button>
          <Button variant="primary" type="submit" disabled={create.isPending}>
            Create and start
          </Button>
        </div>
      </form>
    </div>
  );
}
