import { z } from "zod";
import { GenerateSpec } from "@agentlab/core";
import { runPython } from "../trainer/python";
import { adapterDir, requirePython, trainerFailure } from "./trainer-common";
import type { JobHandler } from "./types";

// `generate`: batched decoding for the base model or an adapter (fetched by its archive's hash);
// outputs are returned for the control plane to parse and grade under one protocol.
const GeneratePayload = z.object({
  spec: GenerateSpec.omit({ adapter: true }).passthrough(),
  adapterArtifact: z.string().regex(/^[a-f0-9]{64}$/).nullable().optional(),
  adapterSha256: z.string().nullable().optional(),
  promptTemplateHash: z.string().optional(),
});

export const generateJob =
  (graceMs: number): JobHandler =>
  async (ctx) => {
    const python = requirePython(ctx);
    if (typeof python !== "string") return python;
    const parsed = GeneratePayload.safeParse(ctx.payload);
    if (!parsed.success) return { reason: "user_error", error: `invalid generate payload: ${parsed.error.message}` };
    const { spec, adapterArtifact } = parsed.data;
    if (parsed.data.adapterSha256 && !adapterArtifact) return { reason: "user_error", error: "an adapter was named without its archive (adapterArtifact)" };
    const outputs: Array<{ task_id: string; text: string; finish_reason: string; completion_tokens: number }> = [];
    try {
      const adapter = adapterArtifact ? await adapterDir(ctx, adapterArtifact) : undefined;
      const total = spec.prompts.length;
      const result = await runPython("generate", { ...spec, adapter }, {
        python,
        signal: ctx.signal,
        graceMs,
        tmpDir: ctx.workDir,
        log: (stream, line) => ctx.emitLog(stream, `${line}\n`),
        onEvent: (ev) => {
          if (ev.event !== "generation") return;
          outputs.push({ task_id: ev.task_id, text: ev.text, finish_reason: ev.finish_reason, completion_tokens: ev.completion_tokens });
          if (outputs.length % 8 === 0 || outputs.length === total) ctx.progress({ done: outputs.length, total });
        },
      });
      return { reason: "succeeded", result: { outputs, summary: result.generate ?? null } };
    } catch (err) {
      return trainerFailure(ctx, err);
    }
  };
