"use client";

import type { PromptVariant } from "@agentlab/core";
import { Field, inputClass, setter, type FormPart } from "./FormField";

// What the prompts show of each task's public context, for training and for evaluation (the
// studies' public-context question); the full context unless changed, which leaves the recipe
// without the field, as recipes were before variants existed.

export const PROMPT_VARIANT_TEXT: Record<PromptVariant, string> = {
  full: "the full public context",
  no_dependencies: "no dependency files",
  no_public_tests: "no public tests",
};

const FIELDS = {
  trainPrompt: {
    path: "training.promptVariant",
    label: "Training prompts show",
    hint: "SFT samples (re-rendered), DPO pairs and GRPO prompts.",
  },
  evalPrompt: {
    path: "evaluation.promptVariant",
    label: "Evaluation prompts show",
    hint: "Dev and test, the same for base and adapter.",
  },
} as const;

export function PromptVariantField({ which, ...part }: FormPart & { which: keyof typeof FIELDS }) {
  const set = setter(part);
  const { path, label, hint } = FIELDS[which];
  return (
    <Field path={path} error={part.error} label={label} hint={hint}>
      <select className={inputClass} name={which} value={part.f[which]} onChange={set(which)}>
        {Object.entries(PROMPT_VARIANT_TEXT).map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );
}
