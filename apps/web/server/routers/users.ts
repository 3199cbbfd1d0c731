import { z } from "zod";
import { Role } from "@agentlab/core";
import { createSetupToken, listPendingInvites, listUsers, removeUser, revokeInvite, setUserRole } from "@agentlab/db";
import { adminProcedure, router } from "../trpc/init";
import { setupPath } from "../auth/setup";
import { Email } from "./auth";

const RoleInput = Role;
export const InviteInput = z.object({
  role: RoleInput,
  email: Email.optional(),
  ttlHours: z
    .number()
    .int()
    .min(1)
    .max(24 * 14)
    .default(72),
});
export type InviteInput = z.infer<typeof InviteInput>;
export const SetRoleInput = z.object({ id: z.string().uuid(), role: RoleInput });
export type SetRoleInput = z.infer<typeof SetRoleInput>;
const ById = z.object({ id: z.string().uuid() });

// Account administration is the admin's alone; the last admin can be neither demoted nor removed.
export const usersRouter = router({
  list: adminProcedure.query(({ ctx }) => listUsers(ctx.db)),

  /** A one-time invitation link with a role; the token is in the returned path and nowhere else. */
  invite: adminProcedure.input(InviteInput).mutation(async ({ ctx, input }) => {
    const t = await createSetupToken(ctx.db, {
      kind: "invite",
      role: input.role,
      email: input.email ?? null,
      ttlS: input.ttlHours * 3600,
      createdBy: ctx.viewer.userId,
    });
    ctx.log.info({ by: ctx.viewer.userId, inviteId: t.id, role: t.role }, "invitation created");
    return { id: t.id, role: t.role, email: t.email, expiresAt: t.expiresAt, path: setupPath(t.token) };
  }),

  invites: adminProcedure.query(({ ctx }) => listPendingInvites(ctx.db)),

  revokeInvite: adminProcedure.input(ById).mutation(async ({ ctx, input }) => {
    await revokeInvite(ctx.db, input.id);
    return { ok: true };
  }),

  setRole: adminProcedure.input(SetRoleInput).mutation(async ({ ctx, input }) => {
    const user = await setUserRole(ctx.db, input.id, input.role);
    ctx.log.info({ by: ctx.viewer.userId, userId: user.id, role: user.role }, "role changed");
    return user;
  }),

  remove: adminProcedure.input(ById).mutation(async ({ ctx, input }) => {
    await removeUser(ctx.db, input.id);
    ctx.log.info({ by: ctx.viewer.userId, userId: input.id }, "user removed");
    return { ok: true };
  }),
});
