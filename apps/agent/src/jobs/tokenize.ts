import { z } from "zod";
import { runPython } from "../trainer/python";
import { fetchBlob, trainerJob } from "./trainer-common";

// `tokenize`: supervised-token counts of a dataset snapshot with the student model's tokenizer.
const TokenizePayload = z.object({ datasetSha256: z.string().regex(/^[a-f0-9]{64}$/), model: z.string().min(1), maxLength: z.number().int().optional() });

export const tokenizeJob = (graceMs: number) =>
  trainerJob("tokenize", TokenizePayload, graceMs, async (ctx, { payload, python }) => {
    const dataset = await fetchBlob(ctx, payload.datasetSha256);
    const result = await runPython("tokenize", { model: payload.model, dataset, max_length: payload.maxLength }, python);
    return { reason: "succeeded", result: { tokenize: result.tokenize ?? null } };
  });
