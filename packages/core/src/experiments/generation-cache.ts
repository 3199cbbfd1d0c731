import { canonicalJson, sha256Hex } from "../hash";
import { publicContext, renderRepairPrompt, type PromptVariant } from "../teacher/prompt";
import type { TaskSpec } from "../tasks/spec";
import type { BaseModel, EvalProtocol } from "./config";

// The generation cache: an answer is decided, before it is generated, by the prompt
// the model sees, the model (base weights and adapter), the recipe's generation protocol and the
// sample's index (its seed derives from the base seed, the task and the index). Answers stored
// under the same key are reused by a later evaluation instead of generating them again.
// What the agent then reports (backend version, device, weights hash) stays in each answer's
// recorded protocol, so a reused answer whose model folder has since changed is caught by the
// protocol check against the answers generated fresh in the same comparison.

/** The parts of the recipe that decide an answer (the grader version does not: answers are re-graded). */
export function generationProtocolHash(recipe: EvalProtocol, baseModel: BaseModel): string {
  const sampled = recipe.decoding.doSample;
  return sha256Hex(
    canonicalJson({
      promptTemplateHash: recipe.promptTemplateHash,
      // As recorded (protocol.ts): greedy ignores temperature, top_p and the seed.
      decoding: sampled ? recipe.decoding : { doSample: false, temperature: 1, topP: 1 },
      seed: sampled ? recipe.seed : 0,
      samples: recipe.samples,
      maxNewTokens: recipe.maxNewTokens,
      backend: recipe.backend,
      device: recipe.device,
      dtype: recipe.dtype,
      checkpointGenerationConfig: recipe.checkpointGenerationConfig,
      baseModel: { source: baseModel.source, ref: baseModel.ref, revision: baseModel.revision ?? null },
    }),
  );
}

/** The task's fingerprint as generation sees it: its id and the prompt rendered under the recipe's variant. */
export const promptFingerprint = (task: TaskSpec, variant?: PromptVariant): string =>
  sha256Hex(canonicalJson({ id: task.id, messages: renderRepairPrompt(publicContext(task, variant)) }));

export function generationCacheKey(k: {
  promptFingerprint: string;
  protocolHash: string;
  adapterSha256: string | null;
  sampleIndex: number;
}): string {
  return sha256Hex(
    canonicalJson({
      prompt: k.promptFingerprint,
      protocol: k.protocolHash,
      adapter: k.adapterSha256,
      sample: k.sampleIndex,
    }),
  );
}

/** Every (task, sample) key of one model's evaluation, by task id, in sample order. */
export function evaluationCacheKeys(
  tasks: readonly TaskSpec[],
  recipe: EvalProtocol,
  baseModel: BaseModel,
  adapterSha256: string | null,
): Map<string, string[]> {
  const protocolHash = generationProtocolHash(recipe, baseModel);
  return new Map(
    tasks.map((t) => {
      const fp = promptFingerprint(t, recipe.promptVariant);
      return [
        t.id,
        Array.from({ length: recipe.samples }, (_, i) =>
          generationCacheKey({ promptFingerprint: fp, protocolHash, adapterSha256, sampleIndex: i }),
        ),
      ];
    }),
  );
}
