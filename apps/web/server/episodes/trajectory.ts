import { DomainError, ToolResult, type BudgetCounters, type SnapshotManifest } from "@agentlab/core";
import { getEpisode, getEpisodeBlobs, getEpisodeSnapshot, getEpisodeState, type Db } from "@agentlab/db";

// One episode as the trajectory viewer reads it: each step with its observation (the tool result
// read back from its content address), the files the step changed (before and after, from the
// step's two workspace snapshots), the budget counters the run started from (a continuation
// resumes a stored state's), and its branch points with the verdict of every continuation.

export type FileChange = { path: string; before: string | null; after: string | null };

const parseResult = (raw: string | undefined) => {
  if (raw === undefined) return null;
  const r = ToolResult.safeParse(JSON.parse(raw));
  return r.success ? r.data : null;
};

/** Paths whose content differs between two manifests, with the content on each side. */
function changedFiles(before: SnapshotManifest, after: SnapshotManifest, content: Map<string, string>): FileChange[] {
  const a = new Map(before.files.map((f) => [f.path, f.sha256]));
  const b = new Map(after.files.map((f) => [f.path, f.sha256]));
  const paths = [...new Set([...a.keys(), ...b.keys()])].filter((p) => a.get(p) !== b.get(p)).sort();
  const text = (h: string | undefined) => (h === undefined ? null : (content.get(h) ?? null));
  return paths.map((path) => ({ path, before: text(a.get(path)), after: text(b.get(path)) }));
}

export async function episodeTrajectory(db: Db, id: string) {
  const found = await getEpisode(db, id);
  if (!found) throw new DomainError("NOT_FOUND", "no such episode");
  const { episode, steps, branches, continuations } = found;
  const trees = [...new Set(steps.flatMap((s) => [s.snapshotBefore, s.snapshotAfter]))];
  const manifests = new Map<string, SnapshotManifest>();
  for (const t of trees) {
    const snap = await getEpisodeSnapshot(db, t);
    if (snap) manifests.set(t, snap.manifest);
  }
  const changedHashes = steps
    .filter((s) => s.snapshotBefore !== s.snapshotAfter)
    .flatMap((s) => [
      ...(manifests.get(s.snapshotBefore)?.files ?? []),
      ...(manifests.get(s.snapshotAfter)?.files ?? []),
    ])
    .map((f) => f.sha256);
  const blobs = new Map(
    (await getEpisodeBlobs(db, [...new Set([...steps.map((s) => s.resultHash), ...changedHashes])])).map((b) => [
      b.sha256,
      b.content,
    ]),
  );
  const start: BudgetCounters = episode.fromStateHash
    ? ((await getEpisodeState(db, episode.fromStateHash))?.counters ?? zeroCounters)
    : zeroCounters;
  const empty: SnapshotManifest = { files: [] };
  return {
    episode,
    startCounters: start,
    steps: steps.map((s) => ({
      ...s,
      result: parseResult(blobs.get(s.resultHash)),
      changes:
        s.snapshotBefore === s.snapshotAfter
          ? []
          : changedFiles(manifests.get(s.snapshotBefore) ?? empty, manifests.get(s.snapshotAfter) ?? empty, blobs),
    })),
    branches: branches.map((b) => ({
      ...b,
      runs: continuations
        .filter((c) => c.branchId === b.id)
        .map((c) => ({ id: c.id, seed: c.seed, verdict: c.verdict, turns: c.turns, testRuns: c.testRuns })),
    })),
    continuations,
  };
}

const zeroCounters: BudgetCounters = { turns: 0, testRuns: 0, contextChars: 0, wallMs: 0 };
