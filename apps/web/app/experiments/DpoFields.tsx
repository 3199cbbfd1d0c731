"use client";

import { MAX_DPO_ROUNDS } from "@agentlab/core";
import type { ExperimentForm } from "./form";
import { Field, inputClass } from "./FormField";

// The recipe's method and, for sft+dpo, its dpo block (issue 18). The inputs only hint at bounds;
// the server's schema (core DpoRecipe) is the judge and its refusals appear under each input.

type DpoKey = Extract<keyof ExperimentForm, `dpo${string}`>;

export function DpoFields({
  f,
  setF,
  error,
}: {
  f: ExperimentForm;
  setF: (f: ExperimentForm) => void;
  error: unknown;
}) {
  const set = (k: DpoKey) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const num = (k: DpoKey, path: string, label: string, attrs: { min?: number; max?: number; hint?: string } = {}) => (
    <Field path={`dpo.${path}`} error={error} label={label} hint={attrs.hint}>
      <input
        className={inputClass}
        name={k}
        type="number"
        step="any"
        min={attrs.min}
        max={attrs.max}
        value={f[k]}
        onChange={set(k)}
      />
    </Field>
  );
  return (
    <div className="space-y-3" data-testid="dpo-fields">
      <div className="grid gap-3 sm:grid-cols-4">
        <Field
          path="method"
          error={error}
          label="Method"
          hint="sft+dpo: after SFT, preference pairs from graded train answers, DPO per seed, a three-way report."
        >
          <select
            className={inputClass}
            name="method"
            value={f.method}
            onChange={(e) => setF({ ...f, method: e.target.value === "sft+dpo" ? "sft+dpo" : "sft" })}
          >
            <option value="sft">sft</option>
            <option value="sft+dpo">sft+dpo</option>
          </select>
        </Field>
        {f.method === "sft+dpo" ? (
          <>
            {num("dpoBeta", "beta", "β", { min: 0, max: 100, hint: "Rewards are β·(log π − log π_ref)." })}
            {num("dpoRounds", "rounds", "Rounds", {
              min: 1,
              max: MAX_DPO_ROUNDS,
              hint: "Each round re-samples from the last round's policy.",
            })}
            {num("dpoSamples", "samples", "Negative samples per task", {
              min: 1,
              max: 64,
              hint: "Sampled on train from the start policy; failures are rejected.",
            })}
          </>
        ) : null}
      </div>
      {f.method === "sft+dpo" ? (
        <>
          <div className="grid gap-3 sm:grid-cols-4">
            {num("dpoTemperature", "temperature", "Sampling temperature", { min: 0, max: 10 })}
            {num("dpoTopP", "topP", "Sampling top_p", { min: 0, max: 1 })}
            {num("dpoSftWeight", "sftWeight", "SFT term weight", { min: 0, max: 100, hint: "0 = pure DPO." })}
            {num("dpoEpochs", "epochs", "DPO epochs", { min: 1, max: 50 })}
            {num("dpoLearningRate", "learningRate", "DPO learning rate", { min: 0, max: 1 })}
            {num("dpoBatchSize", "batchSize", "DPO batch size (pairs)", { min: 1, max: 1024 })}
          </div>
          <div className="grid gap-3 sm:grid-cols-4">
            {num("dpoMarginThreshold", "marginFilter.threshold", "Margin threshold", {
              hint: "Pairs the start policy already prefers by more than this (nats)…",
            })}
            <Field path="dpo.marginFilter.mode" error={error} label="…are">
              <select
                className={inputClass}
                name="dpoMarginMode"
                value={f.dpoMarginMode}
                onChange={(e) => setF({ ...f, dpoMarginMode: e.target.value === "downweight" ? "downweight" : "drop" })}
              >
                <option value="drop">dropped</option>
                <option value="downweight">down-weighted</option>
              </select>
            </Field>
            {f.dpoMarginMode === "downweight"
              ? num("dpoMarginFactor", "marginFilter.factor", "Down-weight factor", {
                  min: 0,
                  max: 1,
                  hint: "Their weight is multiplied by this.",
                })
              : null}
          </div>
        </>
      ) : null}
    </div>
  );
}
