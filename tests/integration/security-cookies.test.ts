import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "@agentlab/db";
import { hashPassword } from "../../apps/web/server/auth/password";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { startTestApp, trpcHttp, type TestApp } from "./auth-helpers";

// Over https the session and CSRF cookies are `__Host-` cookies, and only those are read: a page on
// another port of the same host (which can set plain cookies for the host) cannot toss a session
// in. Plain http (localhost) keeps the bare names and keeps working.

const PASSWORD = "a long enough password";
let t: TestDb;
let https: TestApp;
let http: TestApp;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db
    .insert(users)
    .values({ email: "c@lab.test", name: "C", passwordHash: await hashPassword(PASSWORD), role: "member" });
  https = await startTestApp(t, { AGENTLAB_PUBLIC_URL: "https://lab.example.org" });
  http = await startTestApp(t);
});
afterAll(async () => {
  await https?.close();
  await http?.close();
  await t?.drop();
});

const signIn = (app: TestApp) =>
  trpcHttp(app.url, "auth.login", { input: { email: "c@lab.test", password: PASSWORD } });
const valueOf = (setCookies: string[], name: string) =>
  setCookies
    .find((c) => c.startsWith(`${name}=`))
    ?.split(";")[0]
    ?.slice(name.length + 1) ?? "";
const me = (app: TestApp, cookie: string) => trpcHttp(app.url, "auth.me", { headers: { cookie } });
const signedIn = (r: { body: unknown }) => Boolean((r.body as { result?: { data?: unknown } }).result?.data);

describe("session cookies", () => {
  it("over https are __Host- cookies (Secure, Path=/, no Domain), and a bare one is not read", async () => {
    const res = await signIn(https);
    const session = res.setCookies.find((c) => c.startsWith("__Host-agentlab_session="));
    const csrf = res.setCookies.find((c) => c.startsWith("__Host-agentlab_csrf="));
    expect(session).toMatch(/; Path=\/;.*; HttpOnly; Secure$/);
    expect(csrf).toMatch(/; Secure$/);
    for (const c of res.setCookies) expect(c).not.toMatch(/Domain=/i);
    expect(res.setCookies.some((c) => c.startsWith("agentlab_session="))).toBe(false);
    const token = valueOf(res.setCookies, "__Host-agentlab_session");
    expect(signedIn(await me(https, `__Host-agentlab_session=${token}`))).toBe(true);
    // The same valid token under the bare name (what a page on http://host:other-port can set).
    expect(signedIn(await me(https, `agentlab_session=${token}`))).toBe(false);
  });

  it("over plain http keep the bare names (positive control: the bare cookie is read there)", async () => {
    const res = await signIn(http);
    expect(res.setCookies.some((c) => c.startsWith("__Host-"))).toBe(false);
    const token = valueOf(res.setCookies, "agentlab_session");
    expect(token).toMatch(/^ses_/);
    expect(signedIn(await me(http, `agentlab_session=${token}`))).toBe(true);
  });
});
