import {
  DomainError,
  EPISODE_PROMPT_HASH,
  datasetHash,
  initialObservation,
  orderSamples,
  sampleHash,
  selects,
  sftLine,
  startingPaths,
  trainsOn,
  trajectoryKind,
  trajectorySftSample,
  type TrajectorySelection,
} from "@agentlab/core";
import { toTaskSpec, trajectoryEpisodes, useEpisodesForTraining, type DatasetRow } from "@agentlab/db";
import type { Services } from "../services";
import { writeSnapshot, type Built } from "../teacher/datasets";
import { transcripts } from "./turns";

// Verified episode trajectories become SFT data in the same snapshots as teacher answers
// (teacher/datasets.ts writeSnapshot: ordered, hashed, exported, replayable). An episode qualifies
// when the judge passed what it submitted, in the isolated judge, and the policy itself submitted
// (a budget's submit is no behaviour to learn). Its task must be in the train part of the frozen
// split: a selection holding a dev or test episode is refused by name, and the rows are guarded
// again by the episode_training_uses and sft_samples triggers. A continuation's trajectory is its
// parent's steps up to the state it resumed, then its own.

export type EpisodeDatasetInput = {
  name: string;
  splitId: string;
  kinds: TrajectorySelection;
  /** The episodes to use, each refused by name unless it qualifies; without them, every passing episode on the split's train tasks. */
  episodeIds?: string[];
  policyName?: string;
  /** A recovery's failed attempt (core failedAttemptTurns) stays in each sample's context, unsupervised. */
  maskFailedAttempts?: boolean;
  experimentId?: string | null;
  createdBy?: string | null;
};

type Candidate = Awaited<ReturnType<typeof trajectoryEpisodes>>[number];

/** Why an episode cannot be a training trajectory, or null when it can. */
function unverified(c: Candidate): string | null {
  if (c.episode.verdict !== "pass") return `its verdict is ${c.episode.verdict}`;
  if (!trainsOn(c.episode.grade.isolation) || !trainsOn(c.task.gradingIsolation))
    return "it was graded in-process (forgeable)";
  if (c.episode.submittedBy !== "policy") return `the budget submitted it (${c.episode.exhausted ?? "exhausted"})`;
  return null;
}

export async function createEpisodeDataset(services: Services, input: EpisodeDatasetInput): Promise<DatasetRow> {
  const { db } = services;
  const found = await trajectoryEpisodes(db, input);
  if (input.episodeIds) {
    const known = new Set(found.map((c) => c.episode.id));
    const missing = input.episodeIds.filter((id) => !known.has(id));
    if (missing.length) throw new DomainError("NOT_FOUND", `episode(s) not found: ${missing.slice(0, 5).join(", ")}`);
  }
  // SFT data comes from train tasks only: dev serves selection, test the one final evaluation.
  const outside = found.filter((c) => c.part !== "train");
  if (outside.length)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `SFT data comes from train tasks only; ${outside.length} episode(s) are on dev/test tasks or outside the split: ${outside
        .slice(0, 5)
        .map((c) => `${c.episode.id} (task ${c.task.taskId}, ${c.part ?? "not in the split"})`)
        .join(", ")}`,
    );
  const refused = found.flatMap((c) => {
    const why = unverified(c);
    return why ? [`${c.episode.id}: ${why}`] : [];
  });
  // Named episodes are the caller's choice: one that does not qualify is an error, not a silent drop.
  if (input.episodeIds && refused.length)
    throw new DomainError("PRECONDITION_FAILED", `not verified trajectories: ${refused.slice(0, 5).join("; ")}`);
  const verified = found.filter((c) => unverified(c) === null);
  const turns = await transcripts(
    db,
    verified.map((c) => c.episode),
  );
  const chosen = verified.filter((c) => selects(input.kinds, trajectoryKind(turns.get(c.episode.id) ?? [])));
  if (chosen.length === 0)
    throw new DomainError("PRECONDITION_FAILED", `no verified ${input.kinds} trajectories on this split's train tasks`);
  const seen = new Set<string>();
  const built: Built[] = [];
  for (const c of chosen) {
    const spec = toTaskSpec(c.task);
    const sample = trajectorySftSample(initialObservation(c.task, startingPaths(spec)), turns.get(c.episode.id) ?? [], {
      maskFailedAttempts: input.maskFailedAttempts,
    });
    const hash = sampleHash(sample);
    if (seen.has(hash)) continue;
    seen.add(hash);
    built.push({
      ordinal: 0,
      hash,
      candidateId: null,
      episodeId: c.episode.id,
      taskRowId: c.task.id,
      taskKey: c.task.taskId,
      // The scripted controls apply the task's reference: an oracle, like the reference provider.
      oracle: c.episode.policyName.startsWith("scripted:"),
      messages: sample.messages,
      line: sftLine(sample),
    });
  }
  const snapshotHash = datasetHash(orderSamples(built).map((b) => b.line));
  await useEpisodesForTraining(db, {
    splitId: input.splitId,
    episodeIds: built.flatMap((b) => (b.episodeId ? [b.episodeId] : [])),
    purpose: `sft:${snapshotHash}`,
  });
  return writeSnapshot(
    services,
    {
      name: input.name,
      splitId: input.splitId,
      experimentId: input.experimentId ?? null,
      sourceCollectionIds: [],
      parentId: null,
      createdBy: input.createdBy ?? null,
      promptHash: EPISODE_PROMPT_HASH,
    },
    built,
  );
}
