import { runPython } from "../trainer/python";
import { trainerJob } from "./trainer-common";

// `inspect-model`: a base model's facts read on this box, offline (the experiment form's picker
// validates a local path or a hub id with it before an experiment starts).
export const inspectModelJob = (graceMs: number) =>
  trainerJob("inspect-model", graceMs, async (_ctx, { payload, python }) => {
    const result = await runPython("inspect-model", payload, python);
    if (!result.inspect_model) return { reason: "infra_error", error: "trainer returned no inspect-model summary" };
    return { reason: "succeeded", result: { model: result.inspect_model } };
  });
