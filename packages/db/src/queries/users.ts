import { and, asc, eq, gt, isNull, sql } from "drizzle-orm";
import { DomainError, type Role } from "@agentlab/core";
import type { Db } from "../client";
import { apiTokens, sessions, setupTokens, users } from "../schema";
import { hashToken, newToken } from "../secrets";

export type SetupTokenKind = (typeof setupTokens.$inferSelect)["kind"];

/** Emails compare case-insensitively; they are stored normalized. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

// The columns any API may return: never the password hash.
const publicUser = { id: users.id, email: users.email, name: users.name, role: users.role, createdAt: users.createdAt };
export type PublicUser = { id: string; email: string; name: string; role: Role; createdAt: Date };

export async function adminExists(db: Db): Promise<boolean> {
  const [row] = await db.select({ id: users.id }).from(users).where(eq(users.role, "admin")).limit(1);
  return row !== undefined;
}

/** For login only: the stored hash never leaves the auth service. */
export async function userCredentialsByEmail(db: Db, email: string) {
  const [row] = await db
    .select({ ...publicUser, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.email, normalizeEmail(email)));
  return row;
}

export async function userPasswordHash(db: Db, userId: string): Promise<string | undefined> {
  const [row] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId));
  return row?.passwordHash;
}

/**
 * Replaces the password, ends every session of the user and revokes their API tokens, in one
 * transaction (whoever knew the old password may have made either); the caller opens a new session.
 */
export async function setPasswordHash(
  db: Db,
  userId: string,
  passwordHash: string,
): Promise<{ sessionsEnded: number; tokensRevoked: number }> {
  return db.transaction(async (tx) => {
    await tx.update(users).set({ passwordHash, passwordChangedAt: sql`now()` }).where(eq(users.id, userId));
    const ended = await tx
      .delete(sessions)
      .where(eq(sessions.userId, userId))
      .returning({ tokenHash: sessions.tokenHash });
    const revoked = await tx
      .update(apiTokens)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id });
    return { sessionsEnded: ended.length, tokensRevoked: revoked.length };
  });
}

/** Upgrades the stored hash of the same password (new scrypt parameters): sessions and tokens stay. */
export async function rehashPassword(db: Db, userId: string, passwordHash: string): Promise<void> {
  await db.update(users).set({ passwordHash }).where(eq(users.id, userId));
}

export async function listUsers(db: Db): Promise<PublicUser[]> {
  return db.select(publicUser).from(users).orderBy(asc(users.createdAt));
}

// Role changes and removals lock the admin rows so two admins cannot demote each other at once
// and leave the lab without one.
async function assertAdminRemains(tx: Db, userId: string) {
  const admins = await tx.select({ id: users.id }).from(users).where(eq(users.role, "admin")).for("update");
  if (admins.length === 1 && admins[0]?.id === userId)
    throw new DomainError("CONFLICT", "the last admin cannot be demoted or removed");
}

export async function setUserRole(db: Db, userId: string, role: Role): Promise<PublicUser> {
  return db.transaction(async (tx) => {
    if (role !== "admin") await assertAdminRemains(tx, userId);
    const [row] = await tx.update(users).set({ role }).where(eq(users.id, userId)).returning(publicUser);
    if (!row) throw new DomainError("NOT_FOUND", "no such user");
    return row;
  });
}

/** Deleting a user cascades to their sessions and API tokens, so access ends at once. */
export async function removeUser(db: Db, userId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await assertAdminRemains(tx, userId);
    const deleted = await tx.delete(users).where(eq(users.id, userId)).returning({ id: users.id });
    if (deleted.length === 0) throw new DomainError("NOT_FOUND", "no such user");
  });
}

export type NewSetupToken = {
  id: string;
  token: string;
  kind: SetupTokenKind;
  role: Role;
  email: string | null;
  expiresAt: Date;
};

/**
 * A one-time link token. A new first-admin setup token replaces any unused one, so only the link
 * printed last works.
 */
export async function createSetupToken(
  db: Db,
  opts: { kind: SetupTokenKind; role: Role; ttlS: number; email?: string | null; createdBy?: string | null },
): Promise<NewSetupToken> {
  const token = newToken(opts.kind === "setup" ? "setup" : "inv");
  return db.transaction(async (tx) => {
    if (opts.kind === "setup")
      await tx.delete(setupTokens).where(and(eq(setupTokens.kind, "setup"), isNull(setupTokens.usedAt)));
    const [row] = await tx
      .insert(setupTokens)
      .values({
        tokenHash: hashToken(token),
        kind: opts.kind,
        role: opts.role,
        email: opts.email ? normalizeEmail(opts.email) : null,
        createdBy: opts.createdBy ?? null,
        expiresAt: new Date(Date.now() + opts.ttlS * 1000),
      })
      .returning({
        id: setupTokens.id,
        kind: setupTokens.kind,
        role: setupTokens.role,
        email: setupTokens.email,
        expiresAt: setupTokens.expiresAt,
      });
    if (!row) throw new DomainError("INTERNAL", "could not create a setup token");
    return { ...row, token };
  });
}

const usable = (token: string) =>
  and(eq(setupTokens.tokenHash, hashToken(token)), isNull(setupTokens.usedAt), gt(setupTokens.expiresAt, sql`now()`));

/** What a still-usable link is for (the setup page shows it); undefined once used or expired. */
export async function setupTokenInfo(db: Db, token: string) {
  const [row] = await db
    .select({
      kind: setupTokens.kind,
      role: setupTokens.role,
      email: setupTokens.email,
      expiresAt: setupTokens.expiresAt,
    })
    .from(setupTokens)
    .where(usable(token));
  return row;
}

/**
 * Spends a one-time token and creates its user in one transaction: the conditional update is the
 * single point where a token turns from unused to used, so a second redemption always fails.
 */
export async function redeemSetupToken(
  db: Db,
  opts: { token: string; kind: SetupTokenKind; email: string; name: string; passwordHash: string },
): Promise<PublicUser> {
  const email = normalizeEmail(opts.email);
  return db.transaction(async (tx) => {
    const [link] = await tx
      .update(setupTokens)
      .set({ usedAt: sql`now()` })
      .where(and(usable(opts.token), eq(setupTokens.kind, opts.kind)))
      .returning({ id: setupTokens.id, role: setupTokens.role, email: setupTokens.email });
    if (!link) throw new DomainError("UNAUTHORIZED", "this link is invalid, expired or already used");
    if (opts.kind === "setup" && (await adminExists(tx)))
      throw new DomainError("CONFLICT", "an admin exists already; ask them for an invitation");
    if (link.email && link.email !== email)
      throw new DomainError("FORBIDDEN", "this invitation is for another email address");
    const [taken] = await tx.select({ id: users.id }).from(users).where(eq(users.email, email));
    if (taken) throw new DomainError("CONFLICT", "an account with this email exists already");
    const [user] = await tx
      .insert(users)
      .values({ email, name: opts.name, passwordHash: opts.passwordHash, role: link.role })
      .returning(publicUser);
    if (!user) throw new DomainError("INTERNAL", "could not create the user");
    await tx.update(setupTokens).set({ usedBy: user.id }).where(eq(setupTokens.id, link.id));
    return user;
  });
}

/** Invitations not yet used or expired, for the admin's users page. */
export async function listPendingInvites(db: Db) {
  return db
    .select({
      id: setupTokens.id,
      role: setupTokens.role,
      email: setupTokens.email,
      expiresAt: setupTokens.expiresAt,
      createdAt: setupTokens.createdAt,
    })
    .from(setupTokens)
    .where(and(eq(setupTokens.kind, "invite"), isNull(setupTokens.usedAt), gt(setupTokens.expiresAt, sql`now()`)))
    .orderBy(asc(setupTokens.createdAt));
}

export async function revokeInvite(db: Db, id: string): Promise<void> {
  const deleted = await db
    .delete(setupTokens)
    .where(and(eq(setupTokens.id, id), eq(setupTokens.kind, "invite"), isNull(setupTokens.usedAt)))
    .returning({ id: setupTokens.id });
  if (deleted.length === 0) throw new DomainError("NOT_FOUND", "no such pending invitation");
}
