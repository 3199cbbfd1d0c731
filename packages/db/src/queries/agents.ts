import { and, asc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { DomainError, storableJson, type Capabilities } from "@agentlab/core";
import type { Db } from "../client";
import { agents, enrollmentTokens, jobs } from "../schema";
import { hashToken, newToken } from "../secrets";

export type Agent = typeof agents.$inferSelect;

export async function createEnrollmentToken(
  db: Db,
  opts: { name: string; labels?: string[]; shellJobs?: boolean; ttlS: number; createdBy?: string | null },
) {
  const token = newToken("enr");
  const [row] = await db
    .insert(enrollmentTokens)
    .values({
      tokenHash: hashToken(token),
      name: opts.name,
      labels: opts.labels ?? [],
      shellJobs: opts.shellJobs ?? false,
      expiresAt: new Date(Date.now() + opts.ttlS * 1000),
      createdBy: opts.createdBy ?? null,
    })
    .returning({ id: enrollmentTokens.id, expiresAt: enrollmentTokens.expiresAt });
  if (!row) throw new DomainError("INTERNAL", "could not create enrollment token");
  return { ...row, token };
}

/** Exchanges a one-time enrollment token for an agent credential; the token can never be used again. */
export async function enrollAgent(
  db: Db,
  token: string,
  name?: string,
): Promise<{ agentId: string; credential: string }> {
  return db.transaction(async (tx) => {
    const [enr] = await tx
      .update(enrollmentTokens)
      .set({ usedAt: sql`now()` })
      .where(
        and(
          eq(enrollmentTokens.tokenHash, hashToken(token)),
          isNull(enrollmentTokens.usedAt),
          gt(enrollmentTokens.expiresAt, sql`now()`),
        ),
      )
      .returning();
    if (!enr) throw new DomainError("UNAUTHORIZED", "enrollment token is invalid, expired or already used");
    const credential = newToken("agt");
    const [agent] = await tx
      .insert(agents)
      .values({
        name: name ?? enr.name,
        credentialHash: hashToken(credential),
        labels: enr.labels,
        shellJobs: enr.shellJobs,
      })
      .returning({ id: agents.id });
    if (!agent) throw new DomainError("INTERNAL", "could not create agent");
    await tx.update(enrollmentTokens).set({ agentId: agent.id }).where(eq(enrollmentTokens.id, enr.id));
    return { agentId: agent.id, credential };
  });
}

export async function agentByCredential(db: Db, credential: string): Promise<Agent | undefined> {
  const [row] = await db
    .select()
    .from(agents)
    .where(and(eq(agents.credentialHash, hashToken(credential)), isNull(agents.revokedAt)));
  return row;
}

/** For `doctor`: which agent a credential names and whether it was revoked (null: never issued here). */
export async function credentialStatus(
  db: Db,
  credential: string,
): Promise<{ agentId: string; name: string; revoked: boolean } | null> {
  const [row] = await db
    .select({ agentId: agents.id, name: agents.name, revokedAt: agents.revokedAt })
    .from(agents)
    .where(eq(agents.credentialHash, hashToken(credential)));
  return row ? { agentId: row.agentId, name: row.name, revoked: row.revokedAt !== null } : null;
}

/**
 * Records a connect and its report. The first report after enrolling registers the box: its GPUs
 * and the labels it declares join what the enrollment token gave it. Every later report can only
 * offer less than the registration (a GPU gone missing), never more: the claim reads `gpuCount`,
 * `gpuMemoryMb`, `labels` and `shellJobs` of this row (fitOf), not what the socket says.
 */
export async function agentConnected(db: Db, agentId: string, capabilities: Capabilities, drain: boolean) {
  const gpus = capabilities.gpus.length;
  const memoryMb = gpus ? Math.min(...capabilities.gpus.map((g) => g.memoryMb)) : 0;
  const declared = JSON.stringify(capabilities.labels);
  const first = sql`${agents.registeredGpus} is null`;
  const [row] = await db
    .update(agents)
    .set({
      capabilities: storableJson(capabilities),
      online: true,
      drain,
      connectedAt: sql`now()`,
      lastHeartbeatAt: sql`now()`,
      labels: sql`case when ${first} then array(select distinct x from unnest(${agents.labels} || array(select jsonb_array_elements_text(${declared}::jsonb))) as x order by x) else ${agents.labels} end`,
      registeredGpus: sql`coalesce(${agents.registeredGpus}, ${gpus})`,
      registeredGpuMemoryMb: sql`coalesce(${agents.registeredGpuMemoryMb}, ${memoryMb})`,
      gpuCount: sql`least(coalesce(${agents.registeredGpus}, ${gpus}), ${gpus})`,
      gpuMemoryMb: sql`least(coalesce(${agents.registeredGpuMemoryMb}, ${memoryMb}), ${memoryMb})`,
      sandboxBackend: capabilities.sandbox.backend,
      sandboxOk: capabilities.sandbox.selfTestPassed,
    })
    .where(eq(agents.id, agentId))
    .returning();
  return row;
}

/** An admin's registration of an agent: what it may claim from its next connect on. */
export type AgentRegistration = { labels?: string[]; shellJobs?: boolean; gpus?: number; gpuMemoryMb?: number };

export async function registerAgent(db: Db, agentId: string, r: AgentRegistration) {
  const [row] = await db
    .update(agents)
    .set({
      ...(r.labels ? { labels: [...new Set(r.labels)].sort() } : {}),
      ...(r.shellJobs !== undefined ? { shellJobs: r.shellJobs } : {}),
      ...(r.gpus !== undefined ? { registeredGpus: r.gpus } : {}),
      ...(r.gpuMemoryMb !== undefined ? { registeredGpuMemoryMb: r.gpuMemoryMb } : {}),
    })
    .where(and(eq(agents.id, agentId), isNull(agents.revokedAt)))
    .returning({
      id: agents.id,
      labels: agents.labels,
      shellJobs: agents.shellJobs,
      gpus: agents.registeredGpus,
      gpuMemoryMb: agents.registeredGpuMemoryMb,
    });
  if (!row) throw new DomainError("NOT_FOUND", "no such agent (or it was revoked)");
  return row;
}

export async function agentHeartbeat(db: Db, agentId: string, drain: boolean) {
  await db.update(agents).set({ lastHeartbeatAt: sql`now()`, drain, online: true }).where(eq(agents.id, agentId));
}

export async function agentDisconnected(db: Db, agentId: string) {
  await db.update(agents).set({ online: false }).where(eq(agents.id, agentId));
}

/** Revocation is immediate: the credential stops working and the caller disconnects the socket. */
export async function revokeAgent(db: Db, agentId: string) {
  await db.transaction(async (tx) => {
    const [row] = await tx
      .update(agents)
      .set({ revokedAt: sql`now()`, online: false })
      .where(eq(agents.id, agentId))
      .returning({ id: agents.id });
    if (!row) throw new DomainError("NOT_FOUND", "no such agent");
    // Its running jobs are released now: expiring the lease hands them to the reaper (agent_lost).
    await tx
      .update(jobs)
      .set({ leaseExpiresAt: sql`now()` })
      .where(and(eq(jobs.agentId, agentId), inArray(jobs.state, ["running", "canceling"])));
  });
}

export async function listAgents(db: Db) {
  return db
    .select({
      id: agents.id,
      name: agents.name,
      labels: agents.labels,
      // The registration and what the claim offers now (agentConnected), besides the raw report.
      shellJobs: agents.shellJobs,
      registeredGpus: agents.registeredGpus,
      registeredGpuMemoryMb: agents.registeredGpuMemoryMb,
      gpuCount: agents.gpuCount,
      gpuMemoryMb: agents.gpuMemoryMb,
      capabilities: agents.capabilities,
      online: agents.online,
      drain: agents.drain,
      lastHeartbeatAt: agents.lastHeartbeatAt,
      connectedAt: agents.connectedAt,
      revokedAt: agents.revokedAt,
      createdAt: agents.createdAt,
      currentJobId: sql<
        string | null
      >`(select j.id from ${jobs} j where j.agent_id = "agents"."id" and j.state in ('running','canceling') order by j.started_at desc limit 1)`,
    })
    .from(agents)
    .orderBy(asc(agents.createdAt));
}

export async function countOnlineAgents(db: Db): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(agents)
    .where(and(eq(agents.online, true), isNull(agents.revokedAt)));
  return row?.n ?? 0;
}

/** Enrolled, unrevoked agents with at least one GPU (online or not): what "auto" device resolution reads. */
export async function countGpuAgents(db: Db): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(agents)
    .where(and(isNull(agents.revokedAt), gt(agents.gpuCount, 0)));
  return row?.n ?? 0;
}

/** At server start no socket is connected yet: whatever the table says is from a previous process. */
export async function markAllAgentsOffline(db: Db) {
  await db.update(agents).set({ online: false }).where(eq(agents.online, true));
}
