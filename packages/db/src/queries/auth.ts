import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Db } from "../client";
import { apiTokens, sessions, users } from "../schema";
import { hashToken } from "../tokens";

export type Role = (typeof users.$inferSelect)["role"];
export type Principal = { userId: string; email: string; name: string; role: Role };

export async function principalBySession(db: Db, sessionToken: string): Promise<(Principal & { csrfToken: string }) | undefined> {
  const [row] = await db
    .select({ userId: users.id, email: users.email, name: users.name, role: users.role, csrfToken: sessions.csrfToken })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hashToken(sessionToken)), gt(sessions.expiresAt, sql`now()`)));
  return row;
}

export async function principalByApiToken(db: Db, token: string): Promise<Principal | undefined> {
  const [row] = await db
    .update(apiTokens)
    .set({ lastUsedAt: sql`now()` })
    .where(and(eq(apiTokens.tokenHash, hashToken(token)), isNull(apiTokens.revokedAt)))
    .returning({ userId: apiTokens.userId });
  if (!row) return undefined;
  const [user] = await db.select({ userId: users.id, email: users.email, name: users.name, role: users.role }).from(users).where(eq(users.id, row.userId));
  return user;
}
