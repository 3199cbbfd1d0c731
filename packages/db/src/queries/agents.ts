import { and, asc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { DomainError, type Capabilities } from "@agentlab/core";
import type { Db } from "../client";
import { agents, enrollmentTokens, jobs } from "../schema";
import { hashToken, newToken } from "../secrets";

export type Agent = typeof agents.$inferSelect;

export async function createEnrollmentToken(
  db: Db,
  opts: { name: string; labels?: string[]; ttlS: number; createdBy?: string | null },
) {
  const token = newToken("enr");
  const [row] = await db
    .insert(enrollmentTokens)
    .values({
      tokenHash: hashToken(token),
      name: opts.name,
      labels: opts.labels ?? [],
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
      .values({ name: name ?? enr.name, credentialHash: hashToken(credential), labels: enr.labels })
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

export async function agentConnected(db: Db, agentId: string, capabilities: Capabilities, drain: boolean) {
  const gpuMemoryMb = capabilities.gpus.length ? Math.min(...capabilities.gpus.map((g) => g.memoryMb)) : 0;
  const [row] = await db
    .update(agents)
    .set({
      capabilities,
      online: true,
      drain,
      connectedAt: sql`now()`,
      lastHeartbeatAt: sql`now()`,
      gpuCount: capabilities.gpus.length,
      gpuMemoryMb,
      sandboxBackend: capabilities.sandbox.backend,
      sandboxOk: capabilities.sandbox.selfTestPassed,
    })
    .where(eq(agents.id, agentId))
    .returning();
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
