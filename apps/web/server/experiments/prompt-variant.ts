import {
  DomainError,
  PROMPT_TEMPLATE_HASH,
  promptHashOf,
  publicContext,
  renderRepairPrompt,
  sampleHash,
  sftLine,
  type PromptVariant,
} from "@agentlab/core";
import { allDatasetSamples, type DatasetRow } from "@agentlab/db";
import type { Services } from "../services";
import { childSnapshot, type Built } from "../teacher/datasets";

// A recipe whose training shows less of the public context (training.promptVariant) trains on the
// SFT snapshot's answers under prompts rendered again without the left-out part: a child snapshot
// whose samples keep their answers, tasks and candidates, and whose prompt hash names the variant.
// The child (teacher/datasets.ts childSnapshot: found again on re-entry, written once) is what the
// length check measures and what the train jobs fetch.

export async function withPromptVariant(
  services: Services,
  ds: DatasetRow,
  variant: PromptVariant | undefined,
): Promise<DatasetRow> {
  if (variant === undefined || variant === "full") return ds;
  // Only single-shot repair prompts can be rendered again (an episode's turns are not a template).
  if (ds.promptHash !== PROMPT_TEMPLATE_HASH)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `training.promptVariant "${variant}" re-renders single-shot repair prompts, but SFT dataset "${ds.name}" was rendered with another prompt (${ds.promptHash.slice(0, 12)}…, e.g. agentic episodes)`,
    );
  return childSnapshot(
    services,
    ds,
    ` (prompt: ${variant})`,
    () => rendered(services, ds, variant),
    promptHashOf(variant),
  );
}

/** The snapshot's samples, each prompt rendered again under the variant, each answer kept. */
async function rendered(services: Services, ds: DatasetRow, variant: PromptVariant): Promise<Built[]> {
  const built: Built[] = (await allDatasetSamples(services.db, ds.id)).map(({ sample, task }) => {
    const answer = sample.messages.at(-1);
    if (answer?.role !== "assistant")
      throw new DomainError(
        "PRECONDITION_FAILED",
        `SFT dataset "${ds.name}" sample ${sample.ordinal} (task ${sample.taskKey}) does not end with the answer`,
      );
    const ctx = publicContext(
      { instruction: task.instruction, files: task.files, public_tests: task.publicTests },
      variant,
    );
    const messages = [...renderRepairPrompt(ctx), answer];
    return { ...sample, messages, hash: sampleHash({ messages }), line: sftLine({ messages }) };
  });
  // Two samples whose prompts differed only in the left-out part become one (kept once, as a
  // snapshot keeps identical samples once).
  const seen = new Set<string>();
  return built.filter((b) => !seen.has(b.hash) && seen.add(b.hash));
}
