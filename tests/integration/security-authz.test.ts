import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { appRouter } from "../../apps/web/server/routers";
import { ROLES_BY_RANK, type Role } from "@agentlab/core";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { procedureType, startTestApp, trpcHttp, viewerOf, type Caller, type TestApp } from "./auth-helpers";

// Walks the whole router, so procedures added later are covered without editing this file: each
// must state who may call it (meta.access), and each non-public one must refuse a caller without
// a viewer (UNAUTHORIZED) and every caller of a lower role (FORBIDDEN), before it reads its input.
let t: TestDb;
let s: TestApp;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await startTestApp(t);
});
afterAll(async () => {
  await s?.close();
  await t?.drop();
});

type Proc = { _def: { type: string; meta?: { access?: string } } };
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, Proc>);
const ROLES = ROLES_BY_RANK;
const lower = (role: Role) => ROLES.slice(0, ROLES.indexOf(role));
const guarded = procedures.filter(([, p]) => p._def.meta?.access !== "public");

async function callPath(caller: Caller, path: string): Promise<unknown> {
  let fn: unknown = caller;
  for (const part of path.split(".")) fn = (fn as Record<string, unknown>)[part];
  if (typeof fn !== "function") throw new Error(`no procedure at ${path}`);
  // Deliberately no input: the role check must come first, whatever the input looks like.
  return (fn as (input?: unknown) => Promise<unknown>)(undefined);
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "OK",
    (e: unknown) => (e instanceof TRPCError ? e.code : `not a TRPCError: ${String(e)}`),
  );

const person = (role: Role) => ({
  id: "00000000-0000-4000-8000-000000000001",
  email: `${role}@lab.test`,
  name: role,
  role,
});

describe("router-walking authorization", () => {
  it("finds every procedure, eagerly, each with a stated access level", () => {
    expect(Object.keys(appRouter._def.lazy)).toEqual([]);
    expect(procedures.length).toBeGreaterThan(10);
    for (const path of ["agents.revoke", "jobs.create", "users.setRole", "tokens.create", "auth.login"])
      expect(procedures.map(([p]) => p)).toContain(path);
    const missing = procedures
      .filter(([, p]) => !["public", ...ROLES].includes(p._def.meta?.access ?? ""))
      .map(([path]) => path);
    expect(missing).toEqual([]);
  });

  it("keeps the public surface to sign-in, one-time links and share views", () => {
    const pub = procedures
      .filter(([, p]) => p._def.meta?.access === "public")
      .map(([path]) => path)
      .sort();
    // A new public procedure is a security decision: add it here on purpose, with a reason in docs/security.md.
    // share.view: the one report a share token opens, read-only (docs/security.md, "Share links").
    // share.study: the one study a share token opens, read-only, without its definition (same section).
    expect(pub).toEqual([
      "auth.acceptInvite",
      "auth.linkInfo",
      "auth.login",
      "auth.logout",
      "auth.me",
      "auth.setupFirstAdmin",
      "share.study",
      "share.view",
    ]);
  });

  it.each(guarded.map(([path, p]) => [path, p._def.meta?.access ?? "?"]))(
    "%s (%s) refuses anonymous callers",
    async (path) => {
      expect(await codeOf(callPath(s.caller(null), path))).toBe("UNAUTHORIZED");
    },
  );

  it.each(
    guarded.filter(([, p]) => p._def.meta?.access !== "viewer").map(([path, p]) => [path, p._def.meta?.access ?? "?"]),
  )("%s (%s) refuses every lower role", async (path, access) => {
    const below = lower(access as Role);
    expect(below.length).toBeGreaterThan(0);
    for (const role of below)
      expect([role, await codeOf(callPath(s.caller(viewerOf(person(role))), path))]).toEqual([role, "FORBIDDEN"]);
  });

  it("refuses anonymous HTTP calls to every guarded procedure with 401", async () => {
    const statuses: Record<string, number> = {};
    for (const [path] of guarded) {
      if (procedureType(path) === "subscription") continue;
      statuses[path] = (await trpcHttp(s.url, path, procedureType(path) === "query" ? {} : { input: {} })).status;
    }
    expect(Object.entries(statuses).filter(([, st]) => st !== 401)).toEqual([]);
  });

  it("refuses a cookie-session mutation without the matching CSRF header", async () => {
    const admin = viewerOf(person("admin"), "session");
    for (const [path] of guarded.filter(([, p]) => p._def.type === "mutation")) {
      expect([path, await codeOf(callPath(s.caller(admin, { csrfHeader: null }), path))]).toEqual([path, "FORBIDDEN"]);
      expect([path, await codeOf(callPath(s.caller(admin, { csrfHeader: "forged" }), path))]).toEqual([
        path,
        "FORBIDDEN",
      ]);
    }
  });
});
