import { initTRPC, TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import type { Context } from "./context";
import { issuesByField, summarizeFieldIssues } from "@agentlab/core/validation";
import { toTRPCError } from "./errors";

import { hasRole, unstorableTextAt, type Role } from "@agentlab/core";

export type { Role };

// Every procedure states who may call it; the router-walking test reads this meta.
export type Meta = { access: "public" | Role };

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    errorFormatter({ shape, error }) {
      // Field errors keyed by dotted path (nested recipe fields included), and a readable message
      // instead of tRPC's default, which is the issue list serialized as JSON.
      const zodError = error.cause instanceof ZodError ? issuesByField(error.cause.issues) : null;
      const internal = error.code === "INTERNAL_SERVER_ERROR";
      const message = internal ? "internal error" : zodError ? summarizeFieldIssues(zodError) : shape.message;
      return { ...shape, message, data: { ...shape.data, stack: undefined, zodError } };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

// Domain errors become tRPC errors here, once, for every procedure.
const mapDomainErrors = t.middleware(async ({ next }) => {
  const res = await next();
  if (!res.ok && !(res.error.cause instanceof ZodError) && res.error.code === "INTERNAL_SERVER_ERROR") {
    const mapped = toTRPCError(res.error.cause ?? res.error);
    if (mapped.code !== "INTERNAL_SERVER_ERROR") throw mapped;
  }
  return res;
});

const requireRole = (role: Role) =>
  t.middleware(({ ctx, type, next }) => {
    const viewer = ctx.viewer;
    if (!viewer) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
    if (!hasRole(viewer.role, role)) throw new TRPCError({ code: "FORBIDDEN", message: `requires the ${role} role` });
    // Cookie sessions must echo the CSRF token on every state-changing call; bearer tokens need not.
    if (type === "mutation" && viewer.via === "session" && ctx.csrfHeader !== viewer.csrfToken) {
      throw new TRPCError({ code: "FORBIDDEN", message: "missing or wrong CSRF token" });
    }
    return next({ ctx: { ...ctx, viewer } });
  });

// Text Postgres cannot store (U+0000, a lone surrogate) is refused for every procedure's input at
// once, as a field error (400 naming the field) instead of the 500 of a failed insert.
const refuseUnstorableText = t.middleware(async ({ getRawInput, next }) => {
  const at = unstorableTextAt(await getRawInput());
  if (at) {
    const issue = { code: "custom" as const, path: at.path, message: at.message, input: undefined };
    const field = at.path.join(".") || "input";
    throw new TRPCError({ code: "BAD_REQUEST", message: `${field}: ${at.message}`, cause: new ZodError([issue]) });
  }
  return next();
});

const base = t.procedure.use(mapDomainErrors);
export const publicProcedure = base.meta({ access: "public" }).use(refuseUnstorableText);
export const viewerProcedure = base.meta({ access: "viewer" }).use(requireRole("viewer")).use(refuseUnstorableText);
export const memberProcedure = base.meta({ access: "member" }).use(requireRole("member")).use(refuseUnstorableText);
export const adminProcedure = base.meta({ access: "admin" }).use(requireRole("admin")).use(refuseUnstorableText);
