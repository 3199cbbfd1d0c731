import { and, desc, eq, isNull } from "drizzle-orm";
import { DomainError } from "@agentlab/core";
import type { Db } from "../client";
import { apiTokens } from "../schema";
import { hashToken, newToken } from "../secrets";

// Everything about a token except its hash: safe to return to its owner.
const listed = {
  id: apiTokens.id,
  name: apiTokens.name,
  prefix: apiTokens.prefix,
  createdAt: apiTokens.createdAt,
  expiresAt: apiTokens.expiresAt,
  lastUsedAt: apiTokens.lastUsedAt,
  revokedAt: apiTokens.revokedAt,
};

/** A personal API token: its value is returned here once and never again. */
export async function createApiToken(db: Db, opts: { userId: string; name: string; ttlS?: number | null }) {
  const token = newToken("pat");
  const [row] = await db
    .insert(apiTokens)
    .values({
      userId: opts.userId,
      name: opts.name,
      tokenHash: hashToken(token),
      // "pat_" plus 4 characters: enough to recognise a token, far too little to guess it.
      prefix: token.slice(0, 8),
      expiresAt: opts.ttlS ? new Date(Date.now() + opts.ttlS * 1000) : null,
    })
    .returning(listed);
  if (!row) throw new DomainError("INTERNAL", "could not create the token");
  return { ...row, token };
}

export async function listApiTokens(db: Db, userId: string) {
  return db.select(listed).from(apiTokens).where(eq(apiTokens.userId, userId)).orderBy(desc(apiTokens.createdAt));
}

/** Revokes one of the user's own tokens; another user's token is reported as missing. */
export async function revokeApiToken(db: Db, userId: string, id: string): Promise<void> {
  const rows = await db
    .update(apiTokens)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiTokens.id, id), eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)))
    .returning({ id: apiTokens.id });
  if (rows.length === 0) throw new DomainError("NOT_FOUND", "no such active token");
}
