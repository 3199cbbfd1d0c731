import {
  canonicalJson,
  DomainError,
  parseJobPayload,
  parseJobResult,
  sha256Hex,
  type EpisodeRun,
} from "@agentlab/core";
import {
  getEpisodeState,
  insertEpisodeJob,
  snapshotFiles,
  unstoredEpisodeJobs,
  type Db,
  type NewEpisode,
  type NewStep,
} from "@agentlab/db";
import type { Services } from "../services";
import { verifyEpisodeResult } from "./verify";

// Stores finished `episode` jobs: the result read through its contract, its content addresses
// checked (verify.ts), then written in one transaction (packages/db insertEpisodeJob). Idempotent:
// a job already stored is left alone, so the sweep may see a job twice.

type EpisodeJob = { id: string; payload: unknown; result: unknown };

export async function storeEpisodeJob(db: Db, job: EpisodeJob): Promise<{ id: string; created: boolean }> {
  const payload = parseJobPayload("episode", job.payload);
  if (!payload.ok) throw new DomainError("BAD_REQUEST", `job ${job.id}: ${payload.error}`);
  const result = parseJobResult("episode", job.result);
  if (!result) throw new DomainError("BAD_REQUEST", `job ${job.id}: its result does not match the episode contract`);
  const { taskRowId, task, budget } = payload.payload;
  if (!taskRowId)
    throw new DomainError("BAD_REQUEST", `job ${job.id}: an episode payload without taskRowId cannot be stored`);
  verifyEpisodeResult(result);
  const base = {
    jobId: job.id,
    taskRowId,
    taskKey: task.id,
    budget,
    policyName: result.policy.name,
    policyHash: result.policy.hash,
  };
  const stepBlobs = [result.episode, ...result.branches.map((b) => b.run)].flatMap((run) =>
    run.steps.map((s) => ({ sha256: sha256Hex(canonicalJson(s.result)), content: canonicalJson(s.result) })),
  );
  return insertEpisodeJob(db, {
    blobs: [...Object.entries(result.blobs).map(([sha256, content]) => ({ sha256, content })), ...stepBlobs],
    snapshots: Object.entries(result.snapshots).map(([treeHash, manifest]) => ({ treeHash, manifest })),
    states: result.states.map(({ hash, treeHash, t, transcriptHash, counters, seed }) => ({
      hash,
      treeHash,
      t,
      transcriptHash,
      counters,
      seed,
    })),
    main: {
      episode: episodeRow(base, result.episode, 0),
      steps: stepRows(result.episode),
      branchPoints: result.values.map((v) => ({
        stateHash: v.state,
        kind: v.kind,
        continuations: v.continuations,
        passes: v.passes,
        passRate: v.passRate,
      })),
    },
    continuations: result.branches.map((b) => ({
      episode: episodeRow(base, b.run, b.index + 1),
      steps: stepRows(b.run),
      branchState: b.run.fromState ?? "",
    })),
  });
}

function episodeRow(
  base: Omit<
    NewEpisode,
    | "ordinal"
    | "seed"
    | "fromStateHash"
    | "finalStateHash"
    | "verdict"
    | "grade"
    | "submittedBy"
    | "exhausted"
    | "turns"
    | "testRuns"
  >,
  run: EpisodeRun,
  ordinal: number,
): NewEpisode {
  return {
    ...base,
    ordinal,
    seed: run.seed,
    fromStateHash: run.fromState,
    finalStateHash: run.finalState,
    verdict: run.verdict,
    grade: run.grade,
    submittedBy: run.submittedBy,
    exhausted: run.exhausted,
    turns: run.counters.turns,
    testRuns: run.counters.testRuns,
  };
}

const stepRows = (run: EpisodeRun): NewStep[] =>
  run.steps.map((s) => ({
    index: s.index,
    role: s.role,
    tool: s.call.tool,
    args: s.call.args,
    status: s.result.status,
    refusal: s.result.refusal,
    resultHash: s.resultHash,
    snapshotBefore: s.snapshotBefore,
    snapshotAfter: s.snapshotAfter,
    wallMs: s.wallMs,
  }));

/** One pass over succeeded episode jobs not stored yet; a result that fails its checks is logged and skipped. */
export async function syncEpisodes(services: Pick<Services, "db" | "log">): Promise<number> {
  let stored = 0;
  for (const job of await unstoredEpisodeJobs(services.db)) {
    try {
      if ((await storeEpisodeJob(services.db, job)).created) stored++;
    } catch (e) {
      services.log.warn({ jobId: job.id, err: e }, "episode result not stored");
    }
  }
  return stored;
}

/** A stored state with the files of its workspace, each checked against its address. */
export async function loadStoredState(db: Db, hash: string) {
  const state = await getEpisodeState(db, hash);
  if (!state) throw new DomainError("NOT_FOUND", `episode state ${hash} not found`);
  return { state, files: await snapshotFiles(db, state.treeHash) };
}
