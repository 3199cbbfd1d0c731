"use client";

import { DPO_LR_DIVISOR, EXPERIMENT_METHODS, MAX_DPO_ROUNDS, hasPreferenceHalf, type PairSource } from "@agentlab/core";
import { FieldError } from "../_components/ErrorBox";
import { defaultForm, type ExperimentForm } from "./form";
import { Field, NumberField, inputClass, type NumberAttrs } from "./FormField";

// The recipe's method and, for sft+dpo (and its RFT control), its dpo block; sft+grpo's block is
// GrpoFields. The inputs only hint at bounds; the server's schema (core DpoRecipe) is the judge
// and its refusals appear under each input.

type DpoKey = Exclude<Extract<keyof ExperimentForm, `dpo${string}`>, "dpoPairSources" | "dpoLabels">;
const PAIR_SOURCES: { value: PairSource; label: string; hint: string }[] = [
  { value: "cross_state", label: "cross-state", hint: "a passing answer against a failing one of the same train task" },
  {
    value: "near_miss",
    label: "near-miss",
    hint: "a verified answer against the buggy file or a killed mutant of the reference",
  },
  { value: "on_policy", label: "on-policy", hint: "a passing and a failing sample of the start policy, same prompt" },
  {
    value: "episode_branch",
    label: "episode branches",
    hint: "a passing and a failing continuation of a stored episode state on a train task (run episodes with branches first)",
  },
];
const MARGIN_MODES = ["off", "drop", "downweight"] as const;
const marginMode = (v: string): ExperimentForm["dpoMarginMode"] => MARGIN_MODES.find((m) => m === v) ?? "off";

export function DpoFields({
  f,
  setF,
  error,
}: {
  f: ExperimentForm;
  setF: (f: ExperimentForm) => void;
  error: unknown;
}) {
  const preference = hasPreferenceHalf(f.method);
  const num = (k: DpoKey, path: string, label: string, attrs: NumberAttrs = {}) => (
    <NumberField part={{ f, setF, error }} k={k} path={`dpo.${path}`} label={label} attrs={attrs} />
  );
  return (
    <div className="space-y-3" data-testid="dpo-fields">
      <div className="grid gap-3 sm:grid-cols-4">
        <Field
          path="method"
          error={error}
          label="Method"
          hint="sft+dpo: after SFT, preference pairs from graded train answers, DPO per seed, a three-way report. sft+grpo: after SFT, online RL with the judge's verdicts as reward."
        >
          <select
            className={inputClass}
            name="method"
            value={f.method}
            onChange={(e) => setF({ ...f, method: EXPERIMENT_METHODS.find((m) => m === e.target.value) ?? "sft" })}
          >
            <option value="sft">sft</option>
            <option value="sft+dpo">sft+dpo</option>
            <option value="sft+rft">sft+rft (control: the SFT term alone on the same pairs)</option>
            <option value="sft+grpo">sft+grpo</option>
          </select>
        </Field>
        {preference ? (
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
      {preference ? (
        <>
          <fieldset className="flex flex-wrap items-center gap-3 text-sm" aria-label="pair sources">
            <legend className="mb-1 text-xs font-medium text-zinc-600">Pair sources</legend>
            {PAIR_SOURCES.map((src) => (
              <label key={src.value} className="flex items-center gap-1" title={src.hint}>
                <input
                  type="checkbox"
                  name={`pairSource-${src.value}`}
                  checked={f.dpoPairSources.includes(src.value)}
                  onChange={(e) =>
                    setF({
                      ...f,
                      dpoPairSources: e.target.checked
                        ? [...f.dpoPairSources, src.value]
                        : f.dpoPairSources.filter((x) => x !== src.value),
                    })
                  }
                />
                {src.label}
              </label>
            ))}
            <FieldError error={error} path="dpo.pairSources" />
          </fieldset>
          <div className="grid gap-3 sm:grid-cols-4">
            {num("dpoTemperature", "temperature", "Sampling temperature", { min: 0, max: 10 })}
            {num("dpoTopP", "topP", "Sampling top_p", { min: 0, max: 1 })}
            {num("dpoSftWeight", "sftWeight", "SFT term weight", {
              min: 0,
              max: 100,
              hint: "Keeps the chosen answer likely; 0 = pure DPO.",
            })}
            {num("dpoEpochs", "epochs", "DPO epochs", { min: 1, max: 50 })}
            {num("dpoLearningRate", "learningRate", "DPO learning rate", {
              min: 0,
              max: 1,
              placeholder: String(sftRate(f) / DPO_LR_DIVISOR),
              hint: `Empty: the SFT rate ÷ ${DPO_LR_DIVISOR}; typical ÷10 to ÷100.`,
            })}
            {num("dpoBatchSize", "batchSize", "DPO batch size (pairs)", { min: 1, max: 1024 })}
          </div>
          <div className="grid gap-3 sm:grid-cols-4">
            <Field
              path="dpo.marginFilter.mode"
              error={error}
              label="Margin filter"
              hint="At step 1 every pair's loss is log 2 whatever its start margin: off keeps every pair."
            >
              <select
                className={inputClass}
                name="dpoMarginMode"
                value={f.dpoMarginMode}
                onChange={(e) => setF({ ...f, dpoMarginMode: marginMode(e.target.value) })}
              >
                <option value="off">off</option>
                <option value="drop">drop</option>
                <option value="downweight">down-weight</option>
              </select>
            </Field>
            <Field
              path="dpo.labels"
              error={error}
              label="Labels"
              hint="Swapped: the negative control, trained with chosen and rejected exchanged; it must lose on dev."
            >
              <select
                className={inputClass}
                name="dpoLabels"
                value={f.dpoLabels}
                onChange={(e) => setF({ ...f, dpoLabels: e.target.value === "swapped" ? "swapped" : "as_graded" })}
              >
                <option value="as_graded">as graded</option>
                <option value="swapped">swapped (control)</option>
              </select>
            </Field>
            {f.dpoMarginMode !== "off"
              ? num("dpoMarginThreshold", "marginFilter.threshold", "Margin threshold", {
                  hint: "Pairs the start policy already prefers by more than this (nats).",
                })
              : null}
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

/** The SFT learning rate the form holds (the form's default while it is not a number). */
function sftRate(f: ExperimentForm): number {
  const n = Number(f.learningRate);
  return f.learningRate.trim() && Number.isFinite(n) ? n : Number(defaultForm.learningRate);
}
