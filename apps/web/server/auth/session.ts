import {
  createSession,
  deleteSession,
  rehashPassword,
  setPasswordHash,
  userCredentialsByEmail,
  userPasswordHash,
  type Db,
} from "@agentlab/db";
import { DomainError } from "@agentlab/core";
import type { Services } from "../services";
import type { SetCookie } from "./cookies";
import { SESSION_COOKIE } from "./viewer";
import { burnPasswordCheck, hashPassword, needsRehash, verifyPassword } from "./password";
import { createLoginLimiter, type LoginLimiter } from "./rate-limit";

/** Read by the browser client and echoed as the x-csrf-token header on every mutation. */
export const CSRF_COOKIE = "agentlab_csrf";
export const SESSION_TTL_S = 14 * 24 * 3600;

/** What starting and ending a session needs of a request; the tRPC context is one. */
export type SessionRequest = Pick<Services, "db" | "log"> & {
  ip: string;
  sessionToken: string | null;
  setCookie: SetCookie;
};

// The buckets live in the database (shared by every instance); the limiter object only carries its
// sweep counter. Keyed by the database handle, which every request context of one app shares, so
// the limiter needs no slot in the shared Services object.
const limiters = new WeakMap<Db, LoginLimiter>();
export function loginLimiter(db: Db): LoginLimiter {
  let l = limiters.get(db);
  if (!l) {
    l = createLoginLimiter(db);
    limiters.set(db, l);
  }
  return l;
}

/**
 * Opens a session for `userId` and hands the browser its cookies. The CSRF token travels only in
 * its cookie (one channel for the client to read), never in a response body.
 */
export async function startSession(ctx: SessionRequest, userId: string): Promise<{ expiresAt: Date }> {
  const s = await createSession(ctx.db, userId, SESSION_TTL_S);
  // The session cookie is HttpOnly (page scripts never see it); the CSRF cookie is readable on
  // purpose: a same-origin page copies it into a header, which a cross-site page cannot do.
  ctx.setCookie(SESSION_COOKIE, s.token, { httpOnly: true, maxAgeS: SESSION_TTL_S });
  ctx.setCookie(CSRF_COOKIE, s.csrfToken, { httpOnly: false, maxAgeS: SESSION_TTL_S });
  return { expiresAt: s.expiresAt };
}

export async function endSession(ctx: SessionRequest): Promise<void> {
  if (ctx.sessionToken) await deleteSession(ctx.db, ctx.sessionToken);
  ctx.setCookie(SESSION_COOKIE, "", { httpOnly: true, maxAgeS: 0 });
  ctx.setCookie(CSRF_COOKIE, "", { httpOnly: false, maxAgeS: 0 });
}

const BAD_LOGIN = "wrong email or password";

export async function login(ctx: SessionRequest, input: { email: string; password: string }) {
  const limiter = loginLimiter(ctx.db);
  await limiter.check(ctx.ip, input.email);
  const user = await userCredentialsByEmail(ctx.db, input.email);
  // One message and one scrypt either way, so the answer does not reveal which emails exist.
  const ok = user ? await verifyPassword(input.password, user.passwordHash) : await burnPasswordCheck(input.password);
  if (!user || !ok) {
    ctx.log.info({ ip: ctx.ip, known: Boolean(user) }, "sign-in refused");
    throw new DomainError("UNAUTHORIZED", BAD_LOGIN);
  }
  await limiter.succeeded(input.email, ctx.ip);
  if (needsRehash(user.passwordHash)) await rehashPassword(ctx.db, user.id, await hashPassword(input.password));
  const session = await startSession(ctx, user.id);
  ctx.log.info({ userId: user.id, ip: ctx.ip }, "signed in");
  return { user: { id: user.id, email: user.email, name: user.name, role: user.role }, expiresAt: session.expiresAt };
}

/**
 * Requires the current password; every other session of the user ends and every API token of
 * theirs is revoked (the answer says how many), this browser gets a new session.
 */
export async function changePassword(
  ctx: SessionRequest,
  userId: string,
  input: { currentPassword: string; newPassword: string },
) {
  await loginLimiter(ctx.db).check(ctx.ip, `user:${userId}`);
  const stored = await userPasswordHash(ctx.db, userId);
  if (!stored || !(await verifyPassword(input.currentPassword, stored)))
    throw new DomainError("FORBIDDEN", "the current password is wrong");
  const ended = await setPasswordHash(ctx.db, userId, await hashPassword(input.newPassword));
  const session = await startSession(ctx, userId);
  ctx.log.info({ userId, ...ended }, "password changed; other sessions ended, API tokens revoked");
  // The count excludes the session this request came from, which ended too and is replaced here.
  return {
    expiresAt: session.expiresAt,
    otherSessionsEnded: Math.max(0, ended.sessionsEnded - 1),
    tokensRevoked: ended.tokensRevoked,
  };
}
