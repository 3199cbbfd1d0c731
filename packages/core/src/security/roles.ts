import { z } from "zod";

// The lab's roles, defined once: the database's pgEnum, the tRPC role guards and the UI's role
// selects all read this tuple. The order is the database enum's; `ROLE_RANK` is the privilege order.

export const ROLES = ["admin", "member", "viewer"] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

/** viewer < member < admin: a procedure for `member` admits members and admins. */
export const ROLE_RANK: Readonly<Record<Role, number>> = { viewer: 0, member: 1, admin: 2 };
/** The roles from least to most privileged, as a select lists them. */
export const ROLES_BY_RANK: readonly Role[] = [...ROLES].sort((a, b) => ROLE_RANK[a] - ROLE_RANK[b]);
export const hasRole = (have: Role, need: Role): boolean => ROLE_RANK[have] >= ROLE_RANK[need];

/** A setup link (the first admin) or an invitation. */
export const SETUP_TOKEN_KINDS = ["setup", "invite"] as const;
