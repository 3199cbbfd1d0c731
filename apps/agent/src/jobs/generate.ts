import { z } from "zod";
import { GenerateSpec } from "@agentlab/core";
import { runPython } from "../trainer/python";
import { adapterDir, trainerJob } from "./trainer-common";

// `generate`: batched decoding for the base model or an adapter (fetched by its archive's hash);
// outputs are returned for the control plane to parse and grade under one protocol.
const GeneratePayload = z.object({
  spec: GenerateSpec.omit({ adapter: true }).passthrough(),
  adapterArtifact: z.string().regex(/^[a-f0-9]{64}$/).nullable().optional(),
  adapterSha256: z.string().nullable().optional(),
  promptTemplateHash: z.string().optional(),
});

export const generateJob = (graceMs: number) =>
  trainerJob("generate", GeneratePayload, graceMs, async (ctx, { payload, python }) => {
    const { spec, adapterArtifact } = payload;
    if (payload.adapterSha256 && !adapterArtifact) return { reason: "user_error", error: "an adapter was named without its archive (adapterArtifact)" };
    const outputs: Array<{ task_id: string; text: string; finish_reason: string; completion_tokens: number }> = [];
    const adapter = adapterArtifact ? await adapterDir(ctx, adapterArtifact) : undefined;
    const total = spec.prompts.length;
    const result = await runPython("generate", { ...spec, adapter }, {
      ...python,
      onEvent: (ev) => {
        if (ev.event !== "generation") return;
        outputs.push({ task_id: ev.task_id, text: ev.text, finish_reason: ev.finish_reason, completion_tokens: ev.completion_tokens });
        if (outputs.length % 8 === 0 || outputs.length === total) ctx.progress({ done: outputs.length, total });
      },
    });
    return { reason: "succeeded", result: { outputs, summary: result.generate ?? null } };
  });
