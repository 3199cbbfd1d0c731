import { join } from "node:path";
import { runPython } from "../trainer/python";
import { epochUploads, fetchBlob, trainerJob } from "./trainer-common";

// `train`: SFT on a dataset snapshot fetched by hash; every epoch's adapter is uploaded as soon as
// it exists, so a canceled run keeps its finished epochs (brief §6). Payload and result: TrainJobPayload
// and TrainJobResult in core.

export const trainJob = (graceMs: number) =>
  trainerJob("train", graceMs, async (ctx, { payload, python }) => {
    const { spec, datasetHash, evalDatasetHash } = payload;
    const uploads = epochUploads(ctx);
    try {
      const dataset = await fetchBlob(ctx, datasetHash);
      const evalDataset = evalDatasetHash ? await fetchBlob(ctx, evalDatasetHash) : undefined;
      const result = await runPython(
        "train",
        { ...spec, dataset, eval_dataset: evalDataset, output_dir: join(ctx.workDir, "out") },
        {
          ...python,
          onEvent: (ev) => {
            if (ev.event === "progress") ctx.progress({ ...ev });
            if (ev.event === "artifact") uploads.add(ev);
          },
        },
      );
      await uploads.done();
      const record = result.record;
      if (!record) return { reason: "infra_error", error: "trainer returned no run record" };
      const snapshots = record.snapshots.map((s) => ({ ...s, artifact: uploads.artifacts.get(s.epoch) ?? null }));
      return { reason: "succeeded", result: { ...record, snapshots } };
    } finally {
      // A canceled or failed run still delivers the epochs it finished.
      await uploads.settle();
    }
  });
