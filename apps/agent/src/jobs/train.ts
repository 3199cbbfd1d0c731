import { join } from "node:path";
import { runPython } from "../trainer/python";
import { epochUploads, fetchBlob, trainerJob } from "./trainer-common";
import { resumeSpec } from "./train-resume";

// `train`: SFT on a dataset snapshot fetched by hash; every epoch's adapter is uploaded as soon as
// it exists, so a canceled run keeps its finished epochs (brief §6). Payload and result: TrainJobPayload
// and TrainJobResult in core. spec.world_size N > 1: the trainer runs itself under
// torchrun with N ranks (each in a session of its own, dying with torchrun, so the cancel of the
// process group runPython starts reaches every rank); rank 0 alone reports progress and snapshots; a dead rank makes torchrun stop the others and the job fails
// with the dead rank's exit (agentlab_trainer/distributed.py). A retried one-process run resumes
// after the last epoch an earlier attempt uploaded with its trainer state (train-resume.ts).

/** What this box offers a multi-rank run: its GPUs, and whether ranks may run as CPU processes. */
export type TrainRanks = { gpus: number; cpuRanks: boolean };

/** The fields of a train spec that decide where its ranks run. */
type RanksSpec = { world_size: number; method?: string | null; device?: string };

/** Why this agent cannot run the spec's ranks, or null when it can (the claim normally sees to it). */
export function ranksRefusal(spec: RanksSpec, box: TrainRanks): string | null {
  const n = spec.world_size;
  if (n <= 1 || box.cpuRanks) return null;
  const optIn = "(AGENTLAB_TRAIN_CPU_RANKS=1 runs the ranks as CPU processes, for tests)";
  if (spec.method === "lora-fp32" || spec.device === "cpu")
    return `spec.world_size = ${n} with a CPU ${spec.device === "cpu" ? "device" : "method"} would start ${n} CPU processes ${optIn}`;
  if (n > box.gpus) return `spec.world_size = ${n} needs ${n} GPUs on one agent; this one has ${box.gpus} ${optIn}`;
  return null;
}

export const trainJob = (graceMs: number, ranks: TrainRanks = { gpus: 0, cpuRanks: false }) =>
  trainerJob("train", graceMs, async (ctx, { payload, python }) => {
    const { spec, datasetHash, evalDatasetHash } = payload;
    const refusal = ranksRefusal(spec, ranks);
    if (refusal) return { reason: "user_error", error: refusal };
    const uploads = epochUploads(ctx);
    try {
      const dataset = await fetchBlob(ctx, datasetHash);
      const evalDataset = evalDatasetHash ? await fetchBlob(ctx, evalDatasetHash) : undefined;
      const resumed = await resumeSpec(ctx, spec);
      for (const [epoch, sha] of resumed?.artifacts ?? []) uploads.artifacts.set(epoch, sha);
      const result = await runPython(
        "train",
        {
          ...spec,
          dataset,
          eval_dataset: evalDataset,
          output_dir: join(ctx.workDir, "out"),
          ...(resumed ? { resume: resumed.resume } : {}),
        },
        {
          ...python,
          onEvent: (ev) => {
            if (ev.event === "progress") ctx.progress({ ...ev });
            if (ev.event === "artifact") uploads.add(ev);
            if (ev.event === "trainer_state") uploads.addState(ev);
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
