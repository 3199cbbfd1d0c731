import { z } from "zod";
import { redeemSetupToken, setupTokenInfo } from "@agentlab/db";
import { DomainError } from "@agentlab/core";
import { publicProcedure, router, viewerProcedure } from "../trpc/init";
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "../auth/password";
import { changePassword, endSession, login, loginLimiter, startSession } from "../auth/session";

export const Email = z.string().trim().toLowerCase().email().max(254);
export type Email = z.infer<typeof Email>;
export const NewPassword = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH);
export type NewPassword = z.infer<typeof NewPassword>;
// Link tokens are base64url with a short prefix; anything else is refused before touching the db.
export const LinkToken = z
  .string()
  .min(16)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/);
export type LinkToken = z.infer<typeof LinkToken>;

export const LoginInput = z.object({
  email: z.string().trim().min(1).max(254),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
});
export type LoginInput = z.infer<typeof LoginInput>;
export const RedeemInput = z.object({
  token: LinkToken,
  email: Email,
  name: z.string().trim().min(1).max(100),
  password: NewPassword,
});
export type RedeemInput = z.infer<typeof RedeemInput>;
export const ChangePasswordInput = z.object({
  currentPassword: z.string().min(1).max(MAX_PASSWORD_LENGTH),
  newPassword: NewPassword,
});
export type ChangePasswordInput = z.infer<typeof ChangePasswordInput>;

export const authRouter = router({
  /** Who is calling (null when signed out); pages use it to decide between the app and /login. */
  me: publicProcedure.query(({ ctx }) => {
    const v = ctx.viewer;
    return v ? { id: v.userId, email: v.email, name: v.name, role: v.role, via: v.via } : null;
  }),

  login: publicProcedure.input(LoginInput).mutation(({ ctx, input }) => login(ctx, input)),

  logout: publicProcedure.mutation(async ({ ctx }) => {
    // Signing out needs the CSRF token too when a live session is ending: otherwise any site could
    // sign users out. Without a valid session there is nothing to protect, and the cookies go.
    if (ctx.viewer?.via === "session" && ctx.csrfHeader !== ctx.viewer.csrfToken)
      throw new DomainError("FORBIDDEN", "missing or wrong CSRF token");
    await endSession(ctx);
    return { ok: true };
  }),

  /** What a one-time link is for, so the setup page can show "create the first admin" or "join as member". */
  linkInfo: publicProcedure.input(z.object({ token: LinkToken })).query(async ({ ctx, input }) => {
    await loginLimiter(ctx.db).checkIp(ctx.ip);
    const info = await setupTokenInfo(ctx.db, input.token);
    if (!info) throw new DomainError("NOT_FOUND", "this link is invalid, expired or already used");
    await loginLimiter(ctx.db).redeemed(ctx.ip);
    return info;
  }),

  setupFirstAdmin: publicProcedure.input(RedeemInput).mutation(async ({ ctx, input }) => {
    // Hashing costs 32 MiB and tens of ms, so anonymous callers are throttled before it.
    await loginLimiter(ctx.db).checkIp(ctx.ip);
    const user = await redeemSetupToken(ctx.db, {
      ...input,
      kind: "setup",
      passwordHash: await hashPassword(input.password),
    });
    await loginLimiter(ctx.db).redeemed(ctx.ip);
    ctx.log.warn({ userId: user.id }, "first admin created");
    return { user, ...(await startSession(ctx, user.id)) };
  }),

  acceptInvite: publicProcedure.input(RedeemInput).mutation(async ({ ctx, input }) => {
    await loginLimiter(ctx.db).checkIp(ctx.ip);
    const user = await redeemSetupToken(ctx.db, {
      ...input,
      kind: "invite",
      passwordHash: await hashPassword(input.password),
    });
    await loginLimiter(ctx.db).redeemed(ctx.ip);
    ctx.log.info({ userId: user.id, role: user.role }, "invitation accepted");
    return { user, ...(await startSession(ctx, user.id)) };
  }),

  changePassword: viewerProcedure.input(ChangePasswordInput).mutation(({ ctx, input }) => {
    // A leaked CLI token must not be able to take over the account.
    if (ctx.viewer.via !== "session")
      throw new DomainError("FORBIDDEN", "change your password from a signed-in browser");
    return changePassword(ctx, ctx.viewer.userId, input);
  }),
});
