import { sql } from "drizzle-orm";
import type { JobNeeds, JobType, SandboxBackend } from "@agentlab/core";
import { queryRows, type Db } from "../client";

export type QueuedNeeds = JobNeeds & { count: number; oldestAt: Date };

/**
 * Queued jobs grouped by what the claim asks of an agent (type and requirements), with counts.
 * An experiment's jobs include the grade jobs of its collections' candidates: those are shared
 * across experiments (the candidate cache), so they carry no experiment id of their own.
 */
export async function queuedJobNeeds(
  db: Db,
  opts: { experimentId?: string; jobId?: string } = {},
): Promise<QueuedNeeds[]> {
  const rows = await queryRows<{
    type: JobType;
    labels: string[];
    gpus: number;
    mem: number;
    sandbox: SandboxBackend | null;
    n: number;
    oldest: Date | string;
  }>(
    db,
    sql`select type, required_labels as labels, min_gpus as gpus, min_gpu_memory_mb as mem, sandbox, count(*)::int as n, min(created_at) as oldest
        from jobs
        where state = 'queued'
          and (${opts.experimentId ?? null}::uuid is null or experiment_id = ${opts.experimentId ?? null}::uuid or id in (
            select c.grade_job_id from teacher_collections col
            join teacher_collection_items i on i.collection_id = col.id
            join teacher_candidates c on c.id = i.candidate_id
            where col.experiment_id = ${opts.experimentId ?? null}::uuid and c.grade_job_id is not null))
          and (${opts.jobId ?? null}::uuid is null or id = ${opts.jobId ?? null}::uuid)
        group by type, required_labels, min_gpus, min_gpu_memory_mb, sandbox
        order by n desc
        limit 50`,
  );
  return rows.map((r) => ({
    type: r.type,
    labels: r.labels,
    gpus: r.gpus,
    gpuMemoryMb: r.mem,
    sandbox: r.sandbox,
    count: r.n,
    oldestAt: new Date(r.oldest),
  }));
}
