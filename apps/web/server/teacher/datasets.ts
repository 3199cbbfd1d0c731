import { randomUUID } from "node:crypto";
import {
  DomainError,
  PROMPT_TEMPLATE_HASH,
  datasetHash,
  derivedName,
  isTerminal,
  mainPaths,
  orderSamples,
  parseAnswer,
  publicContext,
  sampleHash,
  sftLine,
  parseJobResult,
  sftSample,
  trainsOn,
  admitsAnswer,
  qualityReadsVerdict,
  type DataQuality,
  type SnapshotQuality,
  type SftSample,
} from "@agentlab/core";
import {
  allDatasetSamples,
  childDatasetNamed,
  episodeFinalFiles,
  finishReplay,
  getDataset,
  getReplay,
  insertDataset,
  insertReplay,
  jobsByIds,
  snapshotCandidates,
  gradingReplayIds,
  type DatasetRow,
  type NewSample,
} from "@agentlab/db";
import { publishBlob } from "../artifacts/publish";
import type { Services } from "../services";
import { gradePayload } from "./grading";

// Verified SFT data. A snapshot is written once: its samples, their order and the hash of its
// JSONL export never change; a replay that drops samples makes a new snapshot with a parent.

export type Built = NewSample & { line: string };

/** Orders, hashes and stores a snapshot, and publishes its export as the artifact agents fetch. */
export async function writeSnapshot(
  services: Services,
  meta: {
    name: string;
    splitId: string;
    experimentId: string | null;
    sourceCollectionIds: string[];
    parentId: string | null;
    createdBy: string | null;
    /** The prompt the samples were rendered with; the single-shot repair template unless named. */
    promptHash?: string;
    /** What an answer had to be to get in (a child inherits its parent's); verified unless named. */
    quality?: SnapshotQuality;
  },
  built: Built[],
): Promise<DatasetRow> {
  const ordered = orderSamples(built).map((s, i) => ({ ...s, ordinal: i }));
  const lines = ordered.map((s) => s.line);
  const hash = datasetHash(lines);
  const row = await insertDataset(
    services.db,
    {
      ...meta,
      hash,
      promptHash: meta.promptHash ?? PROMPT_TEMPLATE_HASH,
      sampleCount: ordered.length,
      taskCount: new Set(ordered.map((s) => s.taskRowId)).size,
      oracleSamples: ordered.filter((s) => s.oracle).length,
    },
    ordered.map(({ line: _line, ...s }) => s),
  );
  await publishExport(services, hash, lines);
  return row;
}

/**
 * A snapshot derived from `parent` (its samples cut or rendered again): named by the parent's name
 * and `suffix`, found again on re-entry and written once, with the parent's split, experiment,
 * sources and creator, and the parent's prompt hash unless the samples were rendered with another.
 */
export async function childSnapshot(
  services: Services,
  parent: DatasetRow,
  suffix: string,
  build: () => Built[] | Promise<Built[]>,
  promptHash: string = parent.promptHash,
): Promise<DatasetRow> {
  const name = derivedName(parent.name, suffix);
  const existing = await childDatasetNamed(services.db, parent.id, name);
  if (existing) return existing;
  return writeSnapshot(
    services,
    {
      name,
      splitId: parent.splitId,
      experimentId: parent.experimentId,
      sourceCollectionIds: parent.sourceCollectionIds,
      parentId: parent.id,
      createdBy: parent.createdBy,
      promptHash,
      quality: parent.quality,
    },
    await build(),
  );
}

// The export is also a content-addressed artifact named by the dataset hash, so agents (the
// tokenize and train jobs) download exactly the bytes the hash names.
async function publishExport(services: Services, hash: string, lines: string[]): Promise<void> {
  const sha = await publishBlob(services, Buffer.from(lines.map((l) => `${l}\n`).join(""), "utf8"));
  if (sha !== hash) throw new DomainError("INTERNAL", "exported bytes do not hash to the snapshot hash");
}

/** Passing candidates of the collections become samples; identical samples are kept once. */
export async function createDataset(
  services: Services,
  input: {
    name: string;
    splitId: string;
    collectionIds: string[];
    experimentId?: string | null;
    createdBy?: string | null;
    /** Which answers get in (core teacher/quality.ts): the hidden-test passes unless named. */
    quality?: DataQuality;
  },
): Promise<DatasetRow> {
  const quality = input.quality ?? "verified";
  const rows = await snapshotCandidates(services.db, {
    splitId: input.splitId,
    collectionIds: input.collectionIds,
    passingOnly: quality === "verified",
  });
  // SFT data comes from train tasks only: dev serves selection, test the one final evaluation.
  const outside = rows.filter((r) => r.part !== "train" && r.candidate.files);
  if (outside.length) {
    const ids = [...new Set(outside.map((r) => `${r.task.taskId} (${r.part})`))];
    throw new DomainError(
      "PRECONDITION_FAILED",
      `SFT data comes from train tasks only; these collections hold answers for ${ids.length} dev/test task(s): ${ids.slice(0, 5).join(", ")}`,
    );
  }
  const seen = new Set<string>();
  const built: Built[] = [];
  for (const { task, candidate } of rows) {
    const admitted = admitsAnswer(quality, {
      parsed: candidate.files !== null,
      verdict: candidate.verdict,
      tests: candidate.gradeResult?.tests ?? [],
    });
    if (!admitted || !candidate.files) continue;
    // A verdict from in-process grading is forgeable: no sample is chosen by it.
    if (
      qualityReadsVerdict(quality) &&
      (!trainsOn(candidate.gradeResult?.isolation) || !trainsOn(task.gradingIsolation))
    )
      continue;
    const sample = sftSample(
      publicContext({ instruction: task.instruction, files: task.files, public_tests: task.publicTests }),
      candidate.files,
    );
    const hash = sampleHash(sample);
    if (seen.has(hash)) continue;
    seen.add(hash);
    built.push({
      ordinal: 0,
      hash,
      candidateId: candidate.id,
      taskRowId: task.id,
      taskKey: task.taskId,
      oracle: candidate.oracle,
      messages: sample.messages,
      line: sftLine(sample),
    });
  }
  if (built.length === 0)
    throw new DomainError(
      "PRECONDITION_FAILED",
      quality === "verified"
        ? "no passing candidates in these collections (grade them first)"
        : `no ${quality.replaceAll("_", " ")} answers in these collections${quality === "unverified" ? "" : " (grade them first)"}`,
    );
  return writeSnapshot(
    services,
    {
      name: input.name,
      splitId: input.splitId,
      experimentId: input.experimentId ?? null,
      sourceCollectionIds: input.collectionIds,
      parentId: null,
      createdBy: input.createdBy ?? null,
      quality,
    },
    built,
  );
}

/** The JSONL export, checked against the snapshot hash before it leaves the server. */
export async function exportDataset(services: Services, id: string): Promise<{ dataset: DatasetRow; jsonl: string }> {
  const dataset = await getDataset(services.db, id);
  if (!dataset) throw new DomainError("NOT_FOUND", "no such dataset");
  const rows = await allDatasetSamples(services.db, id);
  const lines = rows.map((r) => sftLine({ messages: r.sample.messages }));
  if (datasetHash(lines) !== dataset.hash)
    throw new DomainError("INTERNAL", "dataset samples do not match the snapshot hash");
  return { dataset, jsonl: lines.map((l) => `${l}\n`).join("") };
}

const assistantFiles = (s: SftSample, mains: string[]) => {
  const last = s.messages[s.messages.length - 1];
  return last?.role === "assistant"
    ? parseAnswer(last.content, mains)
    : ({ ok: false, reason: "no assistant turn" } as const);
};

/**
 * What a replay grades: a teacher sample's answer as trained on, or an episode's submission (the
 * files of its final workspace less the public tests, as the environment submitted them).
 */
async function replayedFiles(services: Services, r: Awaited<ReturnType<typeof allDatasetSamples>>[number]) {
  if (r.sample.episodeId) {
    const publicPaths = new Set(r.task.publicTests.map((t) => t.path));
    return (await episodeFinalFiles(services.db, r.sample.episodeId)).filter((f) => !publicPaths.has(f.path));
  }
  const parsed = assistantFiles({ messages: r.sample.messages }, mainPaths(r.task));
  if (!parsed.ok) throw new DomainError("INTERNAL", `sample ${r.sample.ordinal} does not parse: ${parsed.reason}`);
  return parsed.files;
}

/** Re-grades every sample (the assistant turn as trained on, against the task as it is now). */
export async function startReplay(services: Services, datasetId: string) {
  const dataset = await getDataset(services.db, datasetId);
  if (!dataset) throw new DomainError("NOT_FOUND", "no such dataset");
  // A replay keeps the answers that still pass: of any other quality it would keep none, or only
  // the verified part, and call that the snapshot replayed.
  if (dataset.quality !== "verified")
    throw new DomainError(
      "PRECONDITION_FAILED",
      `only a verified snapshot can be replayed; "${dataset.name}" holds ${dataset.quality.replaceAll("_", " ")} answers`,
    );
  const replayKey = randomUUID();
  const rows = await allDatasetSamples(services.db, datasetId);
  const jobs: Record<string, string> = {};
  for (const r of rows) {
    const job = await services.queue.enqueue({
      type: "grade",
      payload: gradePayload(r.task, await replayedFiles(services, r)),
      dedupeKey: `replay:${replayKey}:${r.sample.ordinal}`,
      maxDurationS: 900,
    });
    jobs[String(r.sample.ordinal)] = job.id;
  }
  return insertReplay(services.db, datasetId, jobs);
}

/** Completes a replay whose jobs have all ended: survivors form the verified snapshot. */
export async function syncReplay(services: Services, replayId: string) {
  const replay = await getReplay(services.db, replayId);
  if (!replay || replay.state !== "grading") return replay;
  const states = new Map((await jobsByIds(services.db, Object.values(replay.jobs))).map((j) => [j.id, j]));
  if ([...states.values()].some((j) => !isTerminal(j.state))) return replay;
  const dataset = await getDataset(services.db, replay.datasetId);
  if (!dataset) return replay;
  const rows = await allDatasetSamples(services.db, replay.datasetId);
  const kept: Built[] = [];
  const dropped: { ordinal: number; taskKey: string; verdict: string; reasons: string[] }[] = [];
  for (const r of rows) {
    const job = states.get(replay.jobs[String(r.sample.ordinal)] ?? "");
    const res = job?.state === "succeeded" ? parseJobResult("grade", job.result) : null;
    if (res?.verdict === "pass" && trainsOn(res.isolation))
      kept.push({ ...r.sample, line: sftLine({ messages: r.sample.messages }) });
    else
      dropped.push({
        ordinal: r.sample.ordinal,
        taskKey: r.sample.taskKey,
        verdict: res ? res.verdict : "infra_error",
        reasons: res ? res.reasons : [job?.error ?? "grade job did not succeed"],
      });
  }
  let resultId: string | null = dataset.id;
  if (dropped.length > 0) {
    resultId =
      kept.length === 0
        ? null
        : (
            await writeSnapshot(
              services,
              {
                name: `${dataset.name} (replayed)`,
                splitId: dataset.splitId,
                experimentId: dataset.experimentId,
                sourceCollectionIds: dataset.sourceCollectionIds,
                parentId: dataset.id,
                createdBy: dataset.createdBy,
              },
              kept,
            )
          ).id;
  }
  await finishReplay(services.db, replayId, { state: "done", kept: kept.length, dropped, resultDatasetId: resultId });
  return getReplay(services.db, replayId);
}

/** Replays still grading, for the background loop. */
export async function syncReplays(services: Services): Promise<void> {
  for (const id of await gradingReplayIds(services.db)) await syncReplay(services, id);
}
