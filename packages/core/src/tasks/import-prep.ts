import { validateTaskStream } from "./validate";
import { normalizedCodeHash, taskFingerprint, taskTokens } from "./fingerprint";
import { minhashSignature, proposeGroupMerges, type GroupMergeProposal } from "./minhash";
import { proposeClusters, type ClusterProposals } from "./clusters";
import type { TaskLimits, TaskProblem, TaskTestFile } from "./spec";

// The two CPU-heavy halves of a pool import, around the database work in between: reading the file
// (parse, validate, fingerprint, MinHash, the insert batches as JSON text) and, once the pool's
// earlier rows are known, the merge and cluster proposals. Pure, so the web server runs them in a
// worker thread (its event loop keeps serving heartbeats through a 100k-task file) while the CLI,
// tests and bootstrap run them in process; both go through this one interface.

/** One task of the file, as the database step needs it: clash checks by id, problems by line. */
export type ImportTaskRef = { line: number; id: string; group: string };

export type PreparedImport =
  | { ok: false; problems: TaskProblem[] }
  /** `batches`: the rows as JSON array texts of at most IMPORT_BATCH rows (see importRowColumns). */
  | { ok: true; tasks: ImportTaskRef[]; batches: string[] };

/** A row of the pool from before this import, as the proposals read it. */
export type ExistingPoolTask = {
  id: string;
  group: string;
  cluster: string | null;
  signature: number[];
  reference: TaskTestFile[];
};

export type ImportFindings = { merges: GroupMergeProposal[]; clusters: ClusterProposals };

export type ImportPreparer = {
  prepare(
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    limits?: Partial<TaskLimits>,
  ): Promise<PreparedImport>;
  /**
   * The proposals over the pool's earlier rows (`existingJson`, a JSON array of ExistingPoolTask, as
   * Postgres sends it: parsing it is CPU too) plus the prepared tasks, each under its group key
   * (`merged`: source group → the key an earlier merge gave it).
   */
  findings(existingJson: string, merged: Map<string, string>, mergeThreshold?: number): Promise<ImportFindings>;
  close(): Promise<void>;
};

export const IMPORT_BATCH = 1000;

/** The columns of one prepared row (the pool, its group key and the import id are the database step's). */
export type ImportRow = {
  task_id: string;
  source_group: string;
  cluster: string | null;
  language: string;
  instruction: string;
  files: unknown;
  public_tests: unknown;
  hidden_tests: unknown;
  reference: unknown;
  metadata: unknown;
  origin: string;
  fingerprint: string;
  normalized_hash: string;
  minhash: number[];
  size_bytes: number;
};

/** The in-process preparer; the worker thread runs this same one. */
export function createImportPreparer(): ImportPreparer {
  let kept: ExistingPoolTask[] = [];
  return {
    async prepare(chunks, limits) {
      const { tasks: valid, problems } = await validateTaskStream(chunks, { limits });
      if (problems.length > 0) return { ok: false, problems };
      const refs: ImportTaskRef[] = [];
      const batches: string[] = [];
      let batch: ImportRow[] = [];
      kept = [];
      for (const { line, task, bytes } of valid) {
        const minhash = minhashSignature(taskTokens(task));
        refs.push({ line, id: task.id, group: task.source_group });
        kept.push({
          id: task.id,
          group: task.source_group,
          cluster: task.cluster ?? null,
          signature: minhash,
          reference: task.reference,
        });
        batch.push({
          task_id: task.id,
          source_group: task.source_group,
          cluster: task.cluster ?? null,
          language: task.language,
          instruction: task.instruction,
          files: task.files,
          public_tests: task.public_tests,
          hidden_tests: task.hidden_tests,
          reference: task.reference,
          metadata: task.metadata,
          origin: typeof task.metadata.origin === "string" ? task.metadata.origin : "",
          fingerprint: taskFingerprint(task),
          normalized_hash: normalizedCodeHash(task),
          minhash,
          size_bytes: bytes,
        });
        if (batch.length === IMPORT_BATCH) {
          batches.push(JSON.stringify(batch));
          batch = [];
        }
      }
      if (batch.length > 0) batches.push(JSON.stringify(batch));
      return { ok: true, tasks: refs, batches };
    },
    async findings(existingJson, merged, mergeThreshold) {
      const existing = JSON.parse(existingJson) as ExistingPoolTask[];
      const fresh = kept.map((t) => ({ ...t, group: merged.get(t.group) ?? t.group }));
      const all = [...existing, ...fresh];
      return {
        merges: proposeGroupMerges(all, { threshold: mergeThreshold, onlyInvolving: new Set(fresh.map((t) => t.id)) }),
        clusters: proposeClusters(all),
      };
    },
    async close() {
      kept = [];
    },
  };
}

/** What the server's main thread posts to its import worker thread (structured clone), in this order. */
export type ImportWorkerRequest =
  | { kind: "start"; limits?: Partial<TaskLimits> }
  | { kind: "chunk"; bytes: Uint8Array }
  | { kind: "end" }
  | { kind: "findings"; existingJson: string; merged: Map<string, string>; mergeThreshold?: number };

/**
 * What the import worker thread answers: one reply to `end` (`refused` or `rows`) and one to
 * `findings`. The rows' batches travel as UTF-8 bytes whose buffers are transferred, not copied:
 * deserializing them as strings held the server's event loop for seconds at 100k tasks.
 */
export type ImportWorkerReply =
  | { kind: "refused"; problems: TaskProblem[] }
  | { kind: "rows"; tasks: ImportTaskRef[]; batches: Uint8Array[] }
  | { kind: "findings"; result: ImportFindings }
  | { kind: "failed"; message: string };
