import { join } from "node:path";
import { runPython } from "../trainer/python";
import { fetchBlob, tarDirectory, trainerJob } from "./trainer-common";

// `train`: SFT on a dataset snapshot fetched by hash; every epoch's adapter is uploaded as soon as
// it exists, so a canceled run keeps its finished epochs (brief §6). Payload and result: TrainJobPayload
// and TrainJobResult in core.

export const trainJob = (graceMs: number) =>
  trainerJob("train", graceMs, async (ctx, { payload, python }) => {
    const { spec, datasetHash, evalDatasetHash } = payload;
    const artifacts = new Map<number, string>();
    let uploads = Promise.resolve();
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
            if (ev.event === "artifact") {
              uploads = uploads.then(async () => {
                const tar = await tarDirectory(ev.path, join(ctx.workDir, `epoch-${ev.epoch}.tar`));
                const sha = await ctx.uploadArtifact(tar, {
                  name: `adapter-epoch-${ev.epoch}`,
                  kind: "adapter",
                  meta: {
                    epoch: ev.epoch,
                    snapshotSha256: ev.sha256,
                    trainLoss: ev.train_loss,
                    evalLoss: ev.eval_loss,
                  },
                });
                artifacts.set(ev.epoch, sha);
              });
            }
          },
        },
      );
      await uploads;
      const record = result.record;
      if (!record) return { reason: "infra_error", error: "trainer returned no run record" };
      const snapshots = record.snapshots.map((s) => ({ ...s, artifact: artifacts.get(s.epoch) ?? null }));
      return { reason: "succeeded", result: { ...record, snapshots } };
    } finally {
      // A canceled or failed run still delivers the epochs it finished.
      await uploads.catch(() => undefined);
    }
  });
