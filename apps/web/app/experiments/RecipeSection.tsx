"use client";

import Link from "next/link";
import {
  DPO_LR_DIVISOR,
  dpoRecipeOf,
  pairSourcesOf,
  type DpoRecipe,
  type ExperimentConfig,
  type PromptVariant,
  trainingBatchText,
  trainingLengthText,
} from "@agentlab/core";
import { Section } from "../_components/PageHeader";
import { Fields } from "../_components/Stat";
import { usd } from "../../client/format";
import { PAIR_SOURCE_TEXT } from "../_lib/pairs";
import { PROMPT_VARIANT_TEXT } from "./PromptVariantField";

// The experiment page's recipe summary; an sft+dpo recipe also shows its DPO block,
// with the defaults filled as the runner reads them.

const dpoText = (d: DpoRecipe): string =>
  `β ${d.beta}, ${d.rounds} round${d.rounds === 1 ? "" : "s"}, ${d.samples} negative samples per train task ` +
  `(temperature ${d.temperature}, top_p ${d.topP}), ${d.epochs} epochs, lr ${d.learningRate ?? "SFT ÷ " + DPO_LR_DIVISOR}, batch ${d.batchSize}, ` +
  `SFT term ${d.sftWeight}; ` +
  (d.marginFilter.mode === "off"
    ? "no margin filter"
    : `pairs with margin > ${d.marginFilter.threshold} ` +
      (d.marginFilter.mode === "drop" ? "dropped" : `down-weighted ×${d.marginFilter.factor}`));

export function RecipeSection({ config: c }: { config: ExperimentConfig }) {
  const dpo = dpoRecipeOf(c);
  return (
    <Section title="Recipe">
      <Fields
        items={[
          {
            label: "Split",
            value: (
              <Link className="font-mono text-xs underline" href={`/splits/${c.splitId}`}>
                {c.splitId}
              </Link>
            ),
          },
          {
            label: "Data",
            value: c.datasetId ? (
              <Link className="underline" href={`/datasets/${c.datasetId}`}>
                existing SFT dataset
              </Link>
            ) : (
              `teacher, n=${c.teacher.n}, temperature ${c.teacher.sampling.temperature}${c.teacher.budgetUsd !== undefined ? `, budget ${usd(c.teacher.budgetUsd)}` : ""}`
            ),
          },
          {
            label: "Training",
            value: `${trainingLengthText(c.training)}, LoRA r=${c.training.lora.r} α=${c.training.lora.alpha}, lr ${c.training.learningRate}, ${trainingBatchText(c.training)}, ${c.training.quantization}${promptText(c.training.promptVariant)}`,
          },
          ...(dpo
            ? [
                {
                  // sft+rft: the control arm, the SFT term alone on the same pairs and steps
                  label: c.method === "sft+rft" ? "RFT control (SFT term only)" : "DPO",
                  value: `${dpoText(dpo)}; pairs: ${pairSourcesOf(dpo)
                    .map((x) => PAIR_SOURCE_TEXT[x])
                    .join(", ")}${dpo.labels === "swapped" ? "; CONTROL: chosen and rejected swapped" : ""}`,
                },
              ]
            : []),
          {
            label: "Protocol",
            value: `greedy, max ${c.evaluation.maxNewTokens} new tokens, ${c.evaluation.graderVersion}${promptText(c.evaluation.promptVariant)}`,
          },
        ]}
      />
    </Section>
  );
}

/** What the prompts leave out of the public context; nothing said for the full context. */
const promptText = (v: PromptVariant | undefined): string =>
  v && v !== "full" ? `, prompts show ${PROMPT_VARIANT_TEXT[v]}` : "";
