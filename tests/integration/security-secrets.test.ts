import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_EVENTS, PROTOCOL_VERSION, sha256Hex } from "@agentlab/core";
import { apiTokens, enrollAgent, sessions, users } from "@agentlab/db";
import { ensureFirstAdminLink } from "../../apps/web/server/auth/setup";
import { CSRF_COOKIE } from "../../apps/web/server/auth/session";
import { SESSION_COOKIE } from "../../apps/web/server/auth/viewer";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { cookieValue, startTestApp, trpcHttp, type TrpcReply, type TestApp } from "./auth-helpers";
import { connectAgent, hello, request } from "./security-agent-helpers";

// Drives every flow that handles a secret (setup, login, invitations, password change, API tokens,
// agent enrollment and sockets, sealed provider keys), then greps the captured pino output and
// every API response for each secret value and for hashes of them.
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

const secrets = new Map<string, string>();
const keep = (label: string, value: string | null | undefined) => {
  if (!value) throw new Error(`secret ${label} missing`);
  secrets.set(label, value);
  return value;
};
// Responses that hand out a secret exactly once, by design; everything else is checked.
const shownOnce = new Set(["tokens.create", "users.invite", "agents.createEnrollmentToken"]);
const responses: Array<{ path: string; text: string }> = [];
async function call(path: string, opts: Parameters<typeof trpcHttp>[2] = {}): Promise<TrpcReply> {
  const r = await trpcHttp(s.url, path, opts);
  if (!shownOnce.has(path)) responses.push({ path, text: JSON.stringify(r.body) });
  return r;
}
const data = <T>(r: TrpcReply) => (r.body as { result: { data: T } }).result.data;
const tokenOf = (p: string) => new URL(p, "http://x").searchParams.get("token") ?? "";

describe("no secret reaches logs or API responses", () => {
  it("runs the flows", async () => {
    const setup = keep("setup token", tokenOf((await ensureFirstAdminLink(s.app.services)) ?? ""));
    const adminPw = keep("admin password", "Adm1n-password-Zq");
    const created = await call("auth.setupFirstAdmin", {
      input: { token: setup, email: "boss@lab.test", name: "Boss", password: adminPw },
    });
    expect(created.status).toBe(200);
    await call("auth.setupFirstAdmin", {
      input: { token: setup, email: "boss2@lab.test", name: "Boss", password: adminPw },
    }); // reuse: refused
    await call("auth.login", { input: { email: "boss@lab.test", password: keep("wrong password", "Wr0ng-guess-Kx") } });
    await call("auth.login", { input: { email: "boss@lab.test", password: keep("short password", "sh0rt") } });
    const login = await call("auth.login", { input: { email: "boss@lab.test", password: adminPw } });
    const sess = keep("session cookie", cookieValue(login.setCookies, SESSION_COOKIE));
    const csrf = keep("csrf token", cookieValue(login.setCookies, CSRF_COOKIE));
    const as = { cookie: `${SESSION_COOKIE}=${sess}`, "x-csrf-token": csrf };

    const invite = keep(
      "invite token",
      tokenOf(data<{ path: string }>(await call("users.invite", { input: { role: "member" }, headers: as })).path),
    );
    const memberPw = keep("member password", "Memb3r-password-Yw");
    await call("auth.acceptInvite", { input: { token: invite, email: "m@lab.test", name: "M", password: memberPw } });
    await call("auth.acceptInvite", { input: { token: invite, email: "m2@lab.test", name: "M", password: "x" } }); // invalid input + used token
    const newPw = keep("new admin password", "N3w-admin-password-Pp");
    const changed = await call("auth.changePassword", {
      input: { currentPassword: adminPw, newPassword: newPw },
      headers: as,
    });
    const as2 = {
      cookie: `${SESSION_COOKIE}=${keep("new session", cookieValue(changed.setCookies, SESSION_COOKIE))}`,
      "x-csrf-token": keep("new csrf", cookieValue(changed.setCookies, CSRF_COOKIE)),
    };

    const pat = keep(
      "api token",
      data<{ token: string }>(await call("tokens.create", { input: { name: "cli" }, headers: as2 })).token,
    );
    const bearer = { authorization: `Bearer ${pat}` };
    await call("auth.me", { headers: bearer });
    await call("tokens.list", { headers: as2 });
    await call("users.list", { headers: bearer });
    await call("users.invites", { headers: bearer });
    await call("jobs.counts", { headers: { authorization: `Bearer ${pat}x` } }); // a wrong token

    const enr = keep(
      "enrollment token",
      data<{ token: string }>(await call("agents.createEnrollmentToken", { input: { name: "box" }, headers: as2 }))
        .token,
    );
    const { credential } = await enrollAgent(t.db, enr);
    keep("agent credential", credential);
    const sock = await connectAgent(s.url, credential);
    await hello(sock);
    await request(sock, AGENT_EVENTS.log, { version: PROTOCOL_VERSION, jobId: "nope" });
    sock.close();
    await connectAgent(s.url, `${credential}x`).catch(() => null);
    await call("agents.list", { headers: as2 });
    await fetch(`${s.url}/api/artifacts/${"ef".repeat(32)}`, {
      method: "HEAD",
      headers: { authorization: `Bearer ${credential}` },
    });

    // Provider keys: sealed at rest; a careless log line that carries one by its usual name is censored.
    const providerKey = keep("provider key", "sk-test-Provider-Key-0123456789abcdef");
    const sealed = s.app.services.secrets.seal(providerKey);
    expect(sealed).not.toContain(providerKey);
    expect(s.app.services.secrets.open(sealed)).toBe(providerKey);
    s.app.services.log.info({ provider: { name: "openai", apiKey: providerKey }, sealed }, "provider configured");
    s.app.services.log.info(
      { password: adminPw, token: pat, credential, authorization: `Bearer ${pat}` },
      "careless line",
    );
    s.app.services.log.info(
      { req: { headers: { authorization: `Bearer ${pat}`, cookie: `${SESSION_COOKIE}=${sess}` } } },
      "request",
    );
    await call("auth.logout", { method: "POST", headers: as2 });
    await new Promise((r) => setTimeout(r, 100)); // let pino flush
  });

  it("finds none of them, nor their hashes, in the captured logs", () => {
    expect(s.logs.length).toBeGreaterThan(10);
    const text = s.logs.join("\n");
    const leaks = [...secrets]
      .flatMap(([label, v]) => [
        text.includes(v) ? label : null,
        text.includes(sha256Hex(v)) ? `sha256 of ${label}` : null,
      ])
      .filter(Boolean);
    expect(leaks).toEqual([]);
    expect(text).not.toMatch(/scrypt\$/);
    expect(text).toContain("[redacted]"); // the careless lines were written, censored
  });

  it("finds none of them, nor password or token hashes, in API responses", async () => {
    expect(responses.length).toBeGreaterThanOrEqual(15);
    const hashes = [
      ...(await t.db.select({ h: users.passwordHash }).from(users)).map((r) => r.h),
      ...(await t.db.select({ h: apiTokens.tokenHash }).from(apiTokens)).map((r) => r.h),
      ...(await t.db.select({ h: sessions.tokenHash }).from(sessions)).map((r) => r.h),
    ];
    const leaks: string[] = [];
    for (const { path, text } of responses) {
      for (const [label, v] of secrets) if (text.includes(v)) leaks.push(`${label} in ${path}`);
      for (const h of hashes) if (text.includes(h)) leaks.push(`stored hash in ${path}`);
      if (/scrypt\$|passwordHash|tokenHash|credentialHash/.test(text)) leaks.push(`hash field in ${path}`);
    }
    expect(leaks).toEqual([]);
  });
});
