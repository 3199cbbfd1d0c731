import { sql } from "drizzle-orm";
import { SANDBOXED_JOB_TYPES } from "@agentlab/core";
import { queryRows, type Db } from "../../client";

// Why a queued job is still waiting, in the words a user needs: how many jobs the claim takes
// before it (same order as claim.ts: priority, then age), which online agents could take it at
// all (labels, GPU count and memory, sandbox, shell opt-in, not draining), and what those agents
// are running now. "Running 0 of 0" told none of this.

export type QueueWait = {
  jobId: string;
  /** Queued jobs the claim would pick before this one (any agent; some may not fit the same agents). */
  ahead: number;
  /** Online, unrevoked, undrained agents whose capabilities meet the job's requirements. */
  fitting: { id: string; name: string }[];
  /** Jobs running now on those agents (at most 5), oldest first. */
  busy: { jobId: string; type: string; agentName: string; experimentId: string | null }[];
  /** Online agents that cannot take it, each with the first requirement it misses. */
  unfit: { name: string; missing: string }[];
};

type JobRow = {
  id: string;
  type: string;
  priority: number;
  created_at: string;
  required_labels: string[];
  min_gpus: number;
  min_gpu_memory_mb: number;
  sandbox: string | null;
  sandboxed: boolean;
};
type AgentRow = {
  id: string;
  name: string;
  labels: string[];
  gpu_count: number;
  gpu_memory_mb: number;
  sandbox_backend: string | null;
  sandbox_ok: boolean;
  shell_jobs: boolean;
};

/** The first requirement of `job` that `agent` misses, or null when it fits (claim.ts's conditions). */
function missing(job: JobRow, a: AgentRow): string | null {
  const labels = job.required_labels.filter((l) => !a.labels.includes(l));
  if (labels.length) return `label ${labels.join(", ")}`;
  if (a.gpu_count < job.min_gpus) return `${job.min_gpus} GPU(s)`;
  if (a.gpu_memory_mb < job.min_gpu_memory_mb) return `${job.min_gpu_memory_mb} MB of GPU memory`;
  // As fitOf: only a passed self-test makes the backend count.
  const sandbox = a.sandbox_ok ? (a.sandbox_backend ?? "none") : "none";
  if (job.sandbox !== null && sandbox !== job.sandbox) return `the ${job.sandbox} sandbox`;
  if (job.sandboxed && sandbox === "none") return "a working grading sandbox";
  if (job.type === "shell" && !a.shell_jobs) return "the shell opt-in";
  return null;
}

/** Why each of these queued jobs waits; jobs that are not queued are left out. */
export async function queueWaits(db: Db, jobIds: string[]): Promise<QueueWait[]> {
  if (jobIds.length === 0) return [];
  const jobs = await queryRows<JobRow>(
    db,
    sql`select id, type, priority, created_at, required_labels, min_gpus, min_gpu_memory_mb, sandbox,
          type = any(${`{${SANDBOXED_JOB_TYPES.join(",")}}`}::text[]) as sandboxed
        from jobs where id = any(${`{${jobIds.join(",")}}`}::uuid[]) and state = 'queued'`,
  );
  if (jobs.length === 0) return [];
  const agents = await queryRows<AgentRow>(
    db,
    sql`select id, name, labels, gpu_count, gpu_memory_mb, sandbox_backend, sandbox_ok, shell_jobs from agents
        where online and revoked_at is null and not drain order by name`,
  );
  const out: QueueWait[] = [];
  for (const j of jobs) {
    const [{ ahead } = { ahead: 0 }] = await queryRows<{ ahead: number }>(
      db,
      sql`select count(*)::int as ahead from jobs
          where state = 'queued' and id <> ${j.id}
            and (priority > ${j.priority} or (priority = ${j.priority} and created_at < ${j.created_at}::timestamptz))`,
    );
    const fitting = agents.filter((a) => missing(j, a) === null);
    const busy = fitting.length
      ? await queryRows<{ jobId: string; type: string; agentName: string; experimentId: string | null }>(
          db,
          sql`select j.id as "jobId", j.type, a.name as "agentName", j.experiment_id as "experimentId"
              from jobs j join agents a on a.id = j.agent_id
              where j.state = 'running' and j.agent_id = any(${`{${fitting.map((a) => a.id).join(",")}}`}::uuid[])
              order by j.started_at limit 5`,
        )
      : [];
    out.push({
      jobId: j.id,
      ahead,
      fitting: fitting.map((a) => ({ id: a.id, name: a.name })),
      busy,
      unfit: agents.flatMap((a) => {
        const m = missing(j, a);
        return m === null ? [] : [{ name: a.name, missing: m }];
      }),
    });
  }
  return out;
}
