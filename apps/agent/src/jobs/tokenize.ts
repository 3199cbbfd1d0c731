import { z } from "zod";
import { runPython } from "../trainer/python";
import { fetchBlob, requirePython, trainerFailure } from "./trainer-common";
import type { JobHandler } from "./types";

// `tokenize`: supervised-token counts of a dataset snapshot with the student model's tokenizer.
const TokenizePayload = z.object({ datasetSha256: z.string().regex(/^[a-f0-9]{64}$/), model: z.string().min(1), maxLength: z.number().int().optional() });

export const tokenizeJob =
  (graceMs: number): JobHandler =>
  async (ctx) => {
    const python = requirePython(ctx);
    if (typeof python !== "string") return python;
    const parsed = TokenizePayload.safeParse(ctx.payload);
    if (!parsed.success) return { reason: "user_error", error: `invalid tokenize payload: ${parsed.error.message}` };
    try {
      const dataset = await fetchBlob(ctx, parsed.data.datasetSha256);
      const result = await runPython("tokenize", { model: parsed.data.model, dataset, max_length: parsed.data.maxLength }, { python, signal: ctx.signal, graceMs, tmpDir: ctx.workDir, log: (s, l) => ctx.emitLog(s, `${l}\n`) });
      return { reason: "succeeded", result: { tokenize: result.tokenize ?? null } };
    } catch (err) {
      return trainerFailure(ctx, err);
    }
  };
