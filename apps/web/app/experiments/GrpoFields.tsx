"use client";

import { GRPO_REWARD_CONTROLS, type GrpoRewardControl } from "@agentlab/core";
import type { ExperimentForm } from "./form";
import { Field, NumberField, inputClass, type NumberAttrs } from "./FormField";

// The grpo block of an sft+grpo recipe: the settings a run is usually tuned by. The rest (loss
// type, clipping, reward scaling, truncated-completion mask) keep TRL's defaults, which the server
// fills in and the experiment page shows. The server's schema (core GrpoRecipe) judges every value.

type GrpoKey = Exclude<Extract<keyof ExperimentForm, `grpo${string}`>, "grpoRewardControl">;
const rewardControl = (v: string): GrpoRewardControl => GRPO_REWARD_CONTROLS.find((c) => c === v) ?? "none";

export function GrpoFields({
  f,
  setF,
  error,
}: {
  f: ExperimentForm;
  setF: (f: ExperimentForm) => void;
  error: unknown;
}) {
  if (f.method !== "sft+grpo") return null;
  const num = (k: GrpoKey, path: string, label: string, attrs: NumberAttrs = {}) => (
    <NumberField part={{ f, setF, error }} k={k} path={`grpo.${path}`} label={label} attrs={attrs} />
  );
  return (
    <div className="mt-3 space-y-3" data-testid="grpo-fields">
      <div className="grid gap-3 sm:grid-cols-4">
        {num("grpoSteps", "steps", "GRPO steps", { min: 1, hint: "Optimizer steps of each seed's run." })}
        {num("grpoSnapshotEverySteps", "snapshotEverySteps", "Snapshot every (steps)", {
          min: 1,
          hint: "Each snapshot competes on dev with the base and the SFT epochs.",
        })}
        {num("grpoNumGenerations", "numGenerations", "Completions per prompt", {
          min: 2,
          max: 64,
          hint: "The group whose rewards are normalised together.",
        })}
        {num("grpoPromptsPerStep", "promptsPerStep", "Prompts per step", { min: 1, max: 256 })}
      </div>
      <div className="grid gap-3 sm:grid-cols-4">
        {num("grpoLearningRate", "learningRate", "GRPO learning rate", { min: 0, max: 1 })}
        {num("grpoBeta", "beta", "KL β", { min: 0, max: 100, hint: "0: no reference model (TRL's default)." })}
        {num("grpoTemperature", "temperature", "Sampling temperature", { min: 0, max: 10 })}
        {num("grpoMaxCompletionLength", "maxCompletionLength", "Max completion length", {
          min: 1,
          placeholder: f.maxNewTokens,
          hint: "Empty: the evaluation's max new tokens.",
        })}
      </div>
      <div className="grid gap-3 sm:grid-cols-4">
        <Field
          path="grpo.rewardControl"
          error={error}
          label="Reward"
          hint="The control shuffles each group's verdicts: the same reward statistics, no link to the answer."
        >
          <select
            className={inputClass}
            name="grpoRewardControl"
            value={f.grpoRewardControl}
            onChange={(e) => setF({ ...f, grpoRewardControl: rewardControl(e.target.value) })}
          >
            <option value="none">the judge's verdicts</option>
            <option value="shuffle_within_group">control: shuffled within each group</option>
          </select>
        </Field>
      </div>
    </div>
  );
}
