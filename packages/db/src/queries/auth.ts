import { randomBytes } from "node:crypto";
import { and, eq, gt, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { Role } from "@agentlab/core";
import type { Db } from "../client";
import { apiTokens, sessions, users } from "../schema";
import { hashToken, newToken } from "../secrets";

// Users, invitations, API tokens and login rate limits live in their own files; they are
// re-exported here so the package index keeps one line per domain.
export * from "./users";
export * from "./api-tokens";
export * from "./rate-limits";

export type Principal = { userId: string; email: string; name: string; role: Role };

export async function principalBySession(
  db: Db,
  sessionToken: string,
): Promise<(Principal & { csrfToken: string }) | undefined> {
  const [row] = await db
    .select({ userId: users.id, email: users.email, name: users.name, role: users.role, csrfToken: sessions.csrfToken })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hashToken(sessionToken)), gt(sessions.expiresAt, sql`now()`)));
  return row;
}

/** Resolves a personal API token (not revoked, not expired) and stamps its last use. */
export async function principalByApiToken(db: Db, token: string): Promise<Principal | undefined> {
  const [row] = await db
    .update(apiTokens)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(apiTokens.tokenHash, hashToken(token)),
        isNull(apiTokens.revokedAt),
        or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, sql`now()`)),
      ),
    )
    .returning({ userId: apiTokens.userId });
  if (!row) return undefined;
  const [user] = await db
    .select({ userId: users.id, email: users.email, name: users.name, role: users.role })
    .from(users)
    .where(eq(users.id, row.userId));
  return user;
}

export type NewSession = { token: string; csrfToken: string; expiresAt: Date };

/** A fresh session: the cookie value is returned once; only its hash is stored. */
export async function createSession(db: Db, userId: string, ttlS: number): Promise<NewSession> {
  const token = newToken("ses");
  // The CSRF token is not a credential on its own (it is useless without the session cookie), so
  // it is stored as is and echoed to the page through a readable cookie.
  const csrfToken = randomBytes(24).toString("base64url");
  const expiresAt = new Date(Date.now() + ttlS * 1000);
  await db.insert(sessions).values({ tokenHash: hashToken(token), userId, csrfToken, expiresAt });
  // Housekeeping on the write path keeps the table small without a background job.
  await db.delete(sessions).where(lt(sessions.expiresAt, sql`now()`));
  return { token, csrfToken, expiresAt };
}

export async function deleteSession(db: Db, sessionToken: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.tokenHash, hashToken(sessionToken)));
}

/** Signs a user out everywhere, optionally keeping the session that asked for it. */
export async function deleteUserSessions(db: Db, userId: string, keepToken?: string): Promise<void> {
  const keep = keepToken ? ne(sessions.tokenHash, hashToken(keepToken)) : undefined;
  await db.delete(sessions).where(and(eq(sessions.userId, userId), keep));
}
