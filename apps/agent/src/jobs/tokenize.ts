import { runPython } from "../trainer/python";
import { fetchBlob, trainerJob } from "./trainer-common";

// `tokenize`: supervised-token counts of a dataset snapshot with the student model's tokenizer.
export const tokenizeJob = (graceMs: number) =>
  trainerJob("tokenize", graceMs, async (ctx, { payload, python }) => {
    const dataset = await fetchBlob(ctx, payload.datasetSha256);
    const result = await runPython(
      "tokenize",
      { model: payload.model, dataset, max_length: payload.maxLength },
      python,
    );
    if (!result.tokenize) return { reason: "infra_error", error: "trainer returned no tokenize summary" };
    return { reason: "succeeded", result: { tokenize: result.tokenize } };
  });
