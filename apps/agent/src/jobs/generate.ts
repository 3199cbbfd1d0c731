import type { GenerateOutput } from "@agentlab/core";
import { runPython } from "../trainer/python";
import { adapterDir, trainerJob } from "./trainer-common";

// `generate`: batched decoding for the base model or an adapter (fetched by its archive's hash);
// outputs are returned for the control plane to parse and grade under one protocol. Payload and
// result: GenerateJobPayload (which refuses an adapter hash without its archive) and GenerateJobResult.

export const generateJob = (graceMs: number) =>
  trainerJob("generate", graceMs, async (ctx, { payload, python }) => {
    const { spec, adapterArtifact } = payload;
    const outputs: GenerateOutput[] = [];
    const adapter = adapterArtifact ? await adapterDir(ctx, adapterArtifact) : undefined;
    const total = spec.prompts.length * spec.samples;
    const result = await runPython(
      "generate",
      { ...spec, adapter },
      {
        ...python,
        onEvent: (ev) => {
          if (ev.event !== "generation") return;
          outputs.push({
            task_id: ev.task_id,
            sample_index: ev.sample_index,
            seed: ev.seed,
            text: ev.text,
            finish_reason: ev.finish_reason,
            completion_tokens: ev.completion_tokens,
          });
          if (outputs.length % 8 === 0 || outputs.length === total)
            ctx.progress({ event: "items", done: outputs.length, total });
        },
      },
    );
    if (!result.generate) return { reason: "infra_error", error: "trainer returned no generate summary" };
    return { reason: "succeeded", result: { outputs, summary: result.generate } };
  });
