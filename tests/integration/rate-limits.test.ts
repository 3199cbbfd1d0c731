import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openDatabase,
  rateLimits,
  refundRateToken,
  resetRateBucket,
  sweepRateBuckets,
  takeRateToken,
  users,
  type Database,
} from "@agentlab/db";
import { hashPassword } from "../../apps/web/server/auth/password";
import { CSRF_COOKIE } from "../../apps/web/server/auth/session";
import { SESSION_COOKIE } from "../../apps/web/server/auth/viewer";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { cookieValue, startTestApp, trpcHttp, type TestApp } from "./auth-helpers";

// Login rate limits, sessions and CSRF across web instances: the buckets live in
// Postgres, so attempts made through any instance spend from the same ones. Two app instances here
// have their own connection pools on one database, as two processes would
// (multi-instance-processes.test.ts signs in across two real server processes).

let t: TestDb;
let second: Database;
let a: TestApp;
let b: TestApp;
let proxied: TestApp;
const USER = { email: "ann@lab.test", password: "ann's long password" };

beforeAll(async () => {
  t = await createTestDatabase();
  second = await openDatabase({ url: t.url, maxConnections: 5 });
  a = await startTestApp(t);
  b = await startTestApp({ ...t, ...second });
  proxied = await startTestApp(t, { AGENTLAB_TRUSTED_PROXIES: "127.0.0.1, ::1" });
  await t.db
    .insert(users)
    .values({ email: USER.email, name: "Ann", passwordHash: await hashPassword(USER.password), role: "member" });
});
afterAll(async () => {
  await proxied?.close();
  await b?.close();
  await a?.close();
  await second?.close();
  await t?.drop();
});

const code = (r: { body: unknown }) => (r.body as { error?: { data?: { code?: string } } }).error?.data?.code ?? "OK";
const login = (app: TestApp, email: string, password: string, headers: Record<string, string> = {}) =>
  trpcHttp(app.url, "auth.login", { input: { email, password }, headers });

describe("token buckets in Postgres", () => {
  it("give a burst of `capacity`, refill over time, and refund and reset", async () => {
    const bucket = { capacity: 3, refillPerS: 5 };
    const takes = [];
    for (let i = 0; i < 4; i++) takes.push(await takeRateToken(t.db, "k:burst", bucket));
    expect(takes.slice(0, 3)).toEqual([0, 0, 0]);
    expect(takes[3]).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 500)); // ≥ 2 tokens regained at 5/s
    expect(await takeRateToken(t.db, "k:burst", bucket)).toBe(0);
    expect(await takeRateToken(t.db, "k:other", bucket)).toBe(0); // keys are independent

    const slow = { capacity: 1, refillPerS: 0.001 };
    expect(await takeRateToken(t.db, "k:slow", slow)).toBe(0);
    expect(await takeRateToken(t.db, "k:slow", slow)).toBeGreaterThan(900);
    await refundRateToken(t.db, "k:slow", slow);
    expect(await takeRateToken(t.db, "k:slow", slow)).toBe(0);
    await resetRateBucket(t.db, "k:slow");
    expect(await takeRateToken(t.db, "k:slow", slow)).toBe(0);
  });

  it("concurrent takes through two connection pools never spend more than the capacity", async () => {
    const bucket = { capacity: 10, refillPerS: 0.001 };
    const waits = await Promise.all(
      Array.from({ length: 60 }, (_, i) => takeRateToken(i % 2 ? t.db : second.db, "k:race", bucket)),
    );
    expect(waits.filter((w) => w === 0).length).toBe(10);
  });

  it("a sweep drops full buckets only", async () => {
    await takeRateToken(t.db, "k:full-soon", { capacity: 5, refillPerS: 100 });
    await takeRateToken(t.db, "k:empty", { capacity: 1, refillPerS: 0.001 });
    await new Promise((r) => setTimeout(r, 100));
    expect(await sweepRateBuckets(t.db)).toBeGreaterThanOrEqual(1);
    const keys = (await t.db.select({ key: rateLimits.key }).from(rateLimits)).map((r) => r.key);
    expect(keys).toContain("k:empty");
    expect(keys).not.toContain("k:full-soon");
  });
});

describe("two instances", () => {
  it("count one account's failed sign-ins made through both (a per-process limit would allow 10)", async () => {
    const codes: string[] = [];
    for (let i = 0; i < 6; i++) codes.push(code(await login(i % 2 ? b : a, "victim@lab.test", "guess")));
    expect(codes.slice(0, 5)).toEqual(Array(5).fill("UNAUTHORIZED"));
    expect(codes[5]).toBe("TOO_MANY_REQUESTS");
    // Positive control: another account is not refused, so the refusal is that bucket's.
    expect(code(await login(b, "someone@lab.test", "guess"))).toBe("UNAUTHORIZED");
  });

  it("accept a session and its CSRF token made on the other instance", async () => {
    const ok = await login(a, USER.email, USER.password);
    expect(ok.status).toBe(200);
    const token = cookieValue(ok.setCookies, SESSION_COOKIE);
    const csrf = cookieValue(ok.setCookies, CSRF_COOKIE) ?? "";
    const cookie = `${SESSION_COOKIE}=${token}; ${CSRF_COOKIE}=${csrf}`;
    const me = await trpcHttp(b.url, "auth.me", { headers: { cookie } });
    expect((me.body as { result: { data: { email: string } | null } }).result.data?.email).toBe(USER.email);
    // B checks A's CSRF token: refused without it, accepted with it; the session then ends on A too.
    expect((await trpcHttp(b.url, "auth.logout", { method: "POST", headers: { cookie } })).status).toBe(403);
    const out = await trpcHttp(b.url, "auth.logout", { method: "POST", headers: { cookie, "x-csrf-token": csrf } });
    expect(out.status).toBe(200);
    const after = await trpcHttp(a.url, "auth.me", { headers: { cookie } });
    expect((after.body as { result: { data: unknown } }).result.data).toBeNull();
  });
});

describe("X-Forwarded-For", () => {
  // Different accounts each time, so only the IP's bucket (20) can refuse.
  const spray = async (app: TestApp, prefix: string, n: number) => {
    const codes: string[] = [];
    for (let i = 0; i < n; i++)
      codes.push(
        code(await login(app, `${prefix}${i}@lab.test`, "guess", { "x-forwarded-for": `203.0.113.${i + 1}` })),
      );
    return codes;
  };

  it("is ignored unless the peer is a trusted proxy: a client cannot buy fresh buckets with it", async () => {
    // All from 127.0.0.1, whose bucket the tests above spent from already: refused within 21.
    const codes = await spray(a, "direct", 21);
    const first = codes.indexOf("TOO_MANY_REQUESTS");
    expect(first).toBeGreaterThan(0);
    expect(codes.slice(0, first).every((c) => c === "UNAUTHORIZED")).toBe(true);
  });

  it("names the client when the connection comes from a trusted proxy (each client its own bucket)", async () => {
    const codes = await spray(proxied, "proxied", 22);
    expect(codes).toEqual(Array(22).fill("UNAUTHORIZED"));
  });
});
