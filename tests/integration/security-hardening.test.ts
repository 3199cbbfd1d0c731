import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimJob, enqueueJob, getJob, listAttempts, users } from "@agentlab/db";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import type { Viewer } from "../../apps/web/server/auth/viewer";
import { hashPassword } from "../../apps/web/server/auth/password";
import { jobHandlers } from "../../apps/agent/src/jobs";
import { SHELL_REFUSED } from "../../apps/agent/src/jobs/shell";
import { cookieValue, trpcHttp } from "./auth-helpers";
import { enrollTestAgent, startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { tokenizePayload } from "./helpers/payloads";

// Security half: shell jobs are admin-only and opt-in per agent, a password change
// revokes sessions and API tokens, and every response carries the anti-framing headers.

let s: TestServer;
let dir = "";
const callerOf = createCallerFactory(appRouter);
const CALLER_ID = "00000000-0000-4000-8000-000000000001";
const as = (role: Viewer["role"]) =>
  callerOf({
    ...s.app.services,
    viewer: {
      userId: CALLER_ID,
      email: `${role}@lab.test`,
      name: role,
      role,
      via: "token",
      csrfToken: null,
    },
    csrfHeader: null,
    ip: "127.0.0.1",
    sessionToken: null,
    setCookie: () => {},
  });

beforeAll(async () => {
  s = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), "agentlab-shell-"));
  // The callers below act as this user (a job records its creator, who must exist).
  await s.db.db
    .insert(users)
    .values({ id: CALLER_ID, email: "caller@lab.test", name: "caller", passwordHash: "scrypt$unused", role: "admin" });
});
afterAll(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const touch = (name: string) => ({
  type: "shell" as const,
  payload: { argv: ["sh", "-c", `echo SHELL-OUT; touch ${join(dir, name)}`] },
});
const until = (id: string, states: string[]) =>
  waitFor(async () => ((j) => (j && states.includes(j.state) ? j : null))(await getJob(s.db.db, id)), 20_000);

describe("shell jobs", () => {
  it("only admins create them; members still create other jobs", async () => {
    await expect(as("member").jobs.create(touch("member"))).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(as("viewer").jobs.create(touch("viewer"))).rejects.toMatchObject({ code: "FORBIDDEN" });
    const other = await as("member").jobs.create({ type: "tokenize", payload: tokenizePayload() });
    expect(other.type).toBe("tokenize");
    await as("admin").jobs.cancel({ id: other.id });
    const job = await as("admin").jobs.create(touch("admin-created"));
    expect(job).toMatchObject({ type: "shell", state: "queued" });
    await as("admin").jobs.cancel({ id: job.id });
  });

  it("the claim never routes a shell job to an agent that did not opt in", async () => {
    const job = await enqueueJob(s.db.db, touch("routed"));
    const { agentId } = await enrollTestAgent(s.db, "raw");
    const fit = { agentId, labels: [], gpuCount: 0, gpuMemoryMb: 0, sandbox: "process", leaseTtlMs: 30_000 };
    expect(await claimJob(s.db.db, fit)).toBeNull();
    expect(await claimJob(s.db.db, { ...fit, shellJobs: false })).toBeNull();
    // A live agent without the opt-in polls and never gets it.
    const plain = await startInProcessAgent(s, "plain", { pollMs: 100, shellJobs: false });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await getJob(s.db.db, job.id))?.state).toBe("queued");
    expect(await listAttempts(s.db.db, job.id)).toEqual([]);
    // Positive control: an opted-in agent takes and runs it.
    const opted = await startInProcessAgent(s, "opted", { pollMs: 100 });
    const done = await until(job.id, ["succeeded", "failed"]);
    expect(done.state).toBe("succeeded");
    expect(done.agentId).toBe(opted.agentId);
    expect(existsSync(join(dir, "routed"))).toBe(true);
    await Promise.all([plain.stop(), opted.stop()]);
  });

  it("an agent without the opt-in that is handed one anyway refuses it without running it", async () => {
    // This agent claims shell jobs (its capabilities say yes) but its handlers were built without the opt-in.
    const liar = await startInProcessAgent(s, "liar", { pollMs: 100, handlers: jobHandlers({ graceMs: 200 }) });
    const job = await enqueueJob(s.db.db, touch("refused"));
    const done = await until(job.id, ["succeeded", "failed"]);
    expect(done).toMatchObject({
      state: "failed",
      terminalReason: "user_error",
      error: SHELL_REFUSED,
      agentId: liar.agentId,
    });
    expect(existsSync(join(dir, "refused"))).toBe(false);
    await liar.stop();
  });

  it("their logs are admin-only", async () => {
    const job = await enqueueJob(s.db.db, touch("logged"));
    const agent = await startInProcessAgent(s, "logger", { pollMs: 100 });
    await until(job.id, ["succeeded"]);
    const [attempt] = await listAttempts(s.db.db, job.id);
    if (!attempt) throw new Error("no attempt");
    const lines = await waitFor(async () =>
      ((l) => (l.some((x) => x.data.includes("SHELL-OUT")) ? l : null))(
        await as("admin").jobs.logs({ attemptId: attempt.id }),
      ),
    );
    expect(lines.length).toBeGreaterThan(0);
    await expect(as("member").jobs.logs({ attemptId: attempt.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(as("viewer").jobs.logs({ attemptId: attempt.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await agent.stop();
  });
});

describe("a password change", () => {
  it("ends the user's other sessions and revokes their API tokens, and says so", async () => {
    const email = "pw@lab.test";
    const password = "old password 123";
    await s.db.db
      .insert(users)
      .values({ email, name: "Pw", passwordHash: await hashPassword(password), role: "member" });
    const signIn = async () => {
      const r = await trpcHttp(s.url, "auth.login", { input: { email, password } });
      return {
        cookie: r.setCookies.map((c) => c.split(";")[0]).join("; "),
        csrf: cookieValue(r.setCookies, "agentlab_csrf") ?? "",
      };
    };
    const me = async (headers: Record<string, string>) =>
      (await trpcHttp(s.url, "auth.me", { headers })).body as { result?: { data?: unknown } };
    const a = await signIn();
    const b = await signIn();
    const asA = { cookie: a.cookie, "x-csrf-token": a.csrf };
    const token = (
      (await trpcHttp(s.url, "tokens.create", { input: { name: "cli" }, headers: asA })).body as {
        result: { data: { token: string } };
      }
    ).result.data.token;
    const bearer = { authorization: `Bearer ${token}` };
    // Positive control: before the change, the other session and the token both work.
    expect((await me({ cookie: b.cookie })).result?.data).toMatchObject({ email });
    expect((await trpcHttp(s.url, "jobs.counts", { headers: bearer })).status).toBe(200);

    const changed = await trpcHttp(s.url, "auth.changePassword", {
      input: { currentPassword: password, newPassword: "new password 456" },
      headers: asA,
    });
    expect(changed.status).toBe(200);
    expect((changed.body as { result: { data: unknown } }).result.data).toMatchObject({
      otherSessionsEnded: 1,
      tokensRevoked: 1,
    });
    expect((await me({ cookie: b.cookie })).result?.data).toBeNull();
    expect((await trpcHttp(s.url, "jobs.counts", { headers: bearer })).status).toBe(401);
    // The browser that changed it carries on with its new session.
    const fresh = changed.setCookies.map((c) => c.split(";")[0]).join("; ");
    expect((await me({ cookie: fresh })).result?.data).toMatchObject({ email });
  });
});

describe("security headers", () => {
  it("are on every kind of response: tRPC, plain routes, pages and share pages", async () => {
    for (const path of [
      "/api/trpc/auth.me",
      "/api/health",
      "/api/artifacts/nope",
      "/experiments",
      "/share/some-token",
    ]) {
      const r = await fetch(`${s.url}${path}`);
      expect(r.headers.get("content-security-policy"), path).toContain("frame-ancestors 'none'");
      expect(r.headers.get("content-security-policy"), path).toContain("default-src 'self'");
      expect(r.headers.get("x-frame-options"), path).toBe("DENY");
      expect(r.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(r.headers.get("referrer-policy"), path).toBe(
        path.startsWith("/share/") ? "no-referrer" : "strict-origin-when-cross-origin",
      );
    }
  });
});
