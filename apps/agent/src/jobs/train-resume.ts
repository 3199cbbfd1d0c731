import { readdir } from "node:fs/promises";
import { relative } from "node:path";
import type { AdapterSnapshot, EarlierArtifact, TrainSpec } from "@agentlab/core";
import { adapterDir } from "./trainer-common";
import type { JobContext } from "./types";

// A retried train job resumes after the last epoch an earlier attempt finished: the claim hands back
// the adapters and trainer states that attempt uploaded (ClaimedJob.earlierArtifacts), the newest
// upload per epoch wins, and the resumption needs every adapter of epochs 1..k plus epoch k's state.

type Found = { epoch: number; artifact: EarlierArtifact };

const epochOf = (a: EarlierArtifact): number | null =>
  typeof a.meta.epoch === "number" && Number.isInteger(a.meta.epoch) && a.meta.epoch >= 1 ? a.meta.epoch : null;

function newestPerEpoch(all: readonly EarlierArtifact[], kind: string): Map<number, EarlierArtifact> {
  const out = new Map<number, EarlierArtifact>();
  for (const a of all) {
    const e = epochOf(a);
    if (a.kind === kind && e !== null) out.set(e, a); // oldest first: a later upload replaces
  }
  return out;
}

/** The epoch to resume after and what it needs, or null (train from step 0). */
export function resumePoint(
  earlier: readonly EarlierArtifact[],
  epochs: number,
): { epoch: number; state: EarlierArtifact; adapters: Found[] } | null {
  const adapters = newestPerEpoch(earlier, "adapter");
  const states = newestPerEpoch(earlier, "trainer_state");
  let best: { epoch: number; state: EarlierArtifact; adapters: Found[] } | null = null;
  const run: Found[] = [];
  for (let e = 1; e < epochs; e++) {
    const a = adapters.get(e);
    if (!a || typeof a.meta.snapshotSha256 !== "string") break;
    run.push({ epoch: e, artifact: a });
    const s = states.get(e);
    if (s) best = { epoch: e, state: s, adapters: [...run] };
  }
  return best;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((d) => d.isFile())
    .map((d) => relative(dir, `${d.parentPath}/${d.name}`))
    .sort();
}

/** Fetches what the resumption loads and builds spec.resume; null when nothing can be resumed. */
export async function resumeSpec(
  ctx: JobContext,
  spec: { epochs?: number; world_size?: number },
): Promise<{ resume: NonNullable<TrainSpec["resume"]>; artifacts: Map<number, string> } | null> {
  if ((spec.world_size ?? 1) > 1) return null; // a multi-rank run's optimizer state is per rank
  const point = resumePoint(ctx.earlierArtifacts, spec.epochs ?? 1);
  if (!point) return null;
  const snapshots: AdapterSnapshot[] = [];
  const artifacts = new Map<number, string>();
  let last = "";
  for (const { epoch, artifact } of point.adapters) {
    const dir = await adapterDir(ctx, artifact.sha256);
    const m = artifact.meta;
    snapshots.push({
      epoch,
      path: dir,
      sha256: String(m.snapshotSha256),
      files: Array.isArray(m.files) ? m.files.map(String) : await filesUnder(dir),
      train_loss: Number(m.trainLoss),
      eval_loss: typeof m.evalLoss === "number" ? m.evalLoss : null,
      step: Number(m.step ?? 0),
    });
    artifacts.set(epoch, artifact.sha256);
    last = dir;
  }
  const state = await adapterDir(ctx, point.state.sha256);
  ctx.log.info({ epoch: point.epoch }, "resuming training after an earlier attempt's epoch");
  return { resume: { epoch: point.epoch, adapter: last, state, snapshots }, artifacts };
}
