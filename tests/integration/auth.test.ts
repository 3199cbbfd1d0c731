import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { apiTokens, sessions, setupTokens } from "@agentlab/db";
import { ensureFirstAdminLink } from "../../apps/web/server/auth/setup";
import { CSRF_COOKIE } from "../../apps/web/server/auth/session";
import { SESSION_COOKIE } from "../../apps/web/server/auth/viewer";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { cookieValue, startTestApp, trpcHttp, type TestApp } from "./auth-helpers";

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

const tokenOf = (path: string) => new URL(path, "http://x").searchParams.get("token") ?? "";
const data = (r: { body: unknown }) => (r.body as { result?: { data?: unknown } }).result?.data;
const errMsg = (r: { body: unknown }) => (r.body as { error?: { message?: string } }).error?.message;
type Browser = { cookie: string; csrf: string };
const browser = (setCookies: string[]): Browser => ({
  cookie: `${SESSION_COOKIE}=${cookieValue(setCookies, SESSION_COOKIE)}; ${CSRF_COOKIE}=${cookieValue(setCookies, CSRF_COOKIE)}`,
  csrf: cookieValue(setCookies, CSRF_COOKIE) ?? "",
});
const as = (b: Browser, csrf = true) => ({ cookie: b.cookie, ...(csrf ? { "x-csrf-token": b.csrf } : {}) });
const ADMIN = { email: "Admin@Lab.test", name: "Ada", password: "admin password 1" };

let admin: Browser;

describe("first-admin setup", () => {
  it("issues a one-time link at first start; only the latest link works and it works once", async () => {
    const first = await ensureFirstAdminLink(s.app.services);
    const second = await ensureFirstAdminLink(s.app.services);
    expect(first).toMatch(/^\/setup\?token=setup_[A-Za-z0-9_-]{43}$/);
    if (!first || !second) throw new Error("no link");
    const stale = await trpcHttp(s.url, "auth.setupFirstAdmin", { input: { token: tokenOf(first), ...ADMIN } });
    expect(stale.status).toBe(401);

    const info = await trpcHttp(s.url, "auth.linkInfo", { input: { token: tokenOf(second) } });
    expect(data(info)).toMatchObject({ kind: "setup", role: "admin" });

    const ok = await trpcHttp(s.url, "auth.setupFirstAdmin", { input: { token: tokenOf(second), ...ADMIN } });
    expect(ok.status).toBe(200);
    expect(data(ok)).toMatchObject({ user: { email: "admin@lab.test", role: "admin" } });
    // Session cookie: HttpOnly + SameSite=Lax, not Secure over plain http; the CSRF cookie is readable.
    const sess = ok.setCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`)) ?? "";
    expect(sess).toMatch(/HttpOnly/);
    expect(sess).toMatch(/SameSite=Lax/);
    expect(sess).not.toMatch(/Secure/);
    const csrf = ok.setCookies.find((c) => c.startsWith(`${CSRF_COOKIE}=`)) ?? "";
    expect(csrf).not.toMatch(/HttpOnly/);
    admin = browser(ok.setCookies);

    const reuse = await trpcHttp(s.url, "auth.setupFirstAdmin", {
      input: { token: tokenOf(second), ...ADMIN, email: "other@lab.test" },
    });
    expect(reuse.status).toBe(401);
    expect(await ensureFirstAdminLink(s.app.services)).toBeNull();
  });

  it("knows the signed-in user from the cookie and requires the CSRF header on mutations", async () => {
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(admin, false) }))).toMatchObject({
      email: "admin@lab.test",
      role: "admin",
      via: "session",
    });
    expect(data(await trpcHttp(s.url, "auth.me"))).toBeNull();
    const noCsrf = await trpcHttp(s.url, "tokens.create", { input: { name: "cli" }, headers: as(admin, false) });
    expect(noCsrf.status).toBe(403);
    const wrong = await trpcHttp(s.url, "tokens.create", {
      input: { name: "cli" },
      headers: { cookie: admin.cookie, "x-csrf-token": "guess" },
    });
    expect(wrong.status).toBe(403);
    expect((await trpcHttp(s.url, "tokens.create", { input: { name: "cli" }, headers: as(admin) })).status).toBe(200);
  });
});

describe("login", () => {
  it("gives one answer for a wrong password and an unknown email, and signs in with the right one", async () => {
    const wrong = await trpcHttp(s.url, "auth.login", { input: { email: ADMIN.email, password: "nope nope nope" } });
    const unknown = await trpcHttp(s.url, "auth.login", {
      input: { email: "ghost@lab.test", password: "nope nope nope" },
    });
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(errMsg(wrong)).toBe(errMsg(unknown));
    const ok = await trpcHttp(s.url, "auth.login", { input: { email: "ADMIN@lab.test", password: ADMIN.password } });
    expect(ok.status).toBe(200);
    expect(cookieValue(ok.setCookies, SESSION_COOKIE)).toMatch(/^ses_/);
  });

  it("rate-limits per account across IPs and per IP across accounts with 429", async () => {
    const codes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await s
        .caller(null, { ip: `10.0.0.${i}` })
        .auth.login({ email: "victim@lab.test", password: "guess guess" })
        .catch((e: { code: string }) => e.code);
      codes.push(String(r));
    }
    expect(codes.slice(0, 5)).toEqual(Array(5).fill("UNAUTHORIZED"));
    expect(codes[5]).toBe("TOO_MANY_REQUESTS");
    const ip = "10.9.9.9";
    const answers: string[] = [];
    // The bucket holds 20 and regains one every 6 s, so a little refill may happen while scrypt runs.
    while (answers.length < 30 && !answers.some((a) => a.startsWith("TOO_MANY"))) {
      const n = answers.length;
      answers.push(
        await s
          .caller(null, { ip })
          .auth.login({ email: `u${n}@lab.test`, password: "guess guess" })
          .then(
            () => "OK",
            (e: { code: string; message: string }) => `${e.code}: ${e.message}`,
          ),
      );
    }
    expect(answers.slice(0, 20)).toEqual(Array(20).fill("UNAUTHORIZED: wrong email or password"));
    expect(answers.at(-1)).toMatch(/^TOO_MANY_REQUESTS: too many attempts; try again in \d+ s$/);
  });

  it("ends a session at logout and at expiry", async () => {
    const ok = await trpcHttp(s.url, "auth.login", { input: { email: ADMIN.email, password: ADMIN.password } });
    const b = browser(ok.setCookies);
    expect((await trpcHttp(s.url, "auth.logout", { method: "POST", headers: as(b, false) })).status).toBe(403); // no CSRF header
    const out = await trpcHttp(s.url, "auth.logout", { method: "POST", headers: as(b) });
    expect(out.status).toBe(200);
    expect(out.setCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=;`))).toMatch(/Max-Age=0/);
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(b) }))).toBeNull();

    const again = browser(
      (await trpcHttp(s.url, "auth.login", { input: { email: ADMIN.email, password: ADMIN.password } })).setCookies,
    );
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(again) }))).not.toBeNull();
    await t.db.update(sessions).set({ expiresAt: new Date(Date.now() - 1000) });
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(again) }))).toBeNull();
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(admin) }))).toBeNull();
    admin = browser(
      (await trpcHttp(s.url, "auth.login", { input: { email: ADMIN.email, password: ADMIN.password } })).setCookies,
    );
  });

  it("marks cookies Secure when the lab is published over https", async () => {
    const secure = await startTestApp(t, { AGENTLAB_PUBLIC_URL: "https://lab.example.com" });
    try {
      const ok = await trpcHttp(secure.url, "auth.login", { input: { email: ADMIN.email, password: ADMIN.password } });
      expect(ok.setCookies).toHaveLength(2);
      for (const c of ok.setCookies) expect(c).toMatch(/; Secure/);
    } finally {
      await secure.close();
    }
  });
});

describe("invitations and roles", () => {
  it("an invitation is one-time, bound to its email when given, and expires", async () => {
    const inv = data(
      await trpcHttp(s.url, "users.invite", { input: { role: "member", email: "mem@lab.test" }, headers: as(admin) }),
    ) as { path: string; id: string };
    const token = tokenOf(inv.path);
    const member = { token, email: "mem@lab.test", name: "Mem", password: "member password" };
    expect(
      (await trpcHttp(s.url, "auth.acceptInvite", { input: { ...member, email: "intruder@lab.test" } })).status,
    ).toBe(403);
    expect((await trpcHttp(s.url, "auth.setupFirstAdmin", { input: member })).status).toBe(401); // wrong kind
    const ok = await trpcHttp(s.url, "auth.acceptInvite", { input: member });
    expect(data(ok)).toMatchObject({ user: { role: "member" } });
    expect((await trpcHttp(s.url, "auth.acceptInvite", { input: { ...member, email: "mem2@lab.test" } })).status).toBe(
      401,
    );

    const late = data(await trpcHttp(s.url, "users.invite", { input: { role: "viewer" }, headers: as(admin) })) as {
      path: string;
      id: string;
    };
    await t.db
      .update(setupTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(setupTokens.id, late.id));
    expect(
      (
        await trpcHttp(s.url, "auth.acceptInvite", {
          input: { token: tokenOf(late.path), email: "late@lab.test", name: "L", password: "viewer password" },
        })
      ).status,
    ).toBe(401);
  });

  it("keeps one admin at least, and removing a user ends their sessions", async () => {
    const users = data(await trpcHttp(s.url, "users.list", { headers: as(admin) })) as Array<{
      id: string;
      role: string;
      email: string;
    }>;
    const adminRow = users.find((u) => u.role === "admin");
    const memberRow = users.find((u) => u.email === "mem@lab.test");
    if (!adminRow || !memberRow) throw new Error("users missing");
    expect(JSON.stringify(users)).not.toMatch(/scrypt|password/i);
    expect(
      (await trpcHttp(s.url, "users.setRole", { input: { id: adminRow.id, role: "member" }, headers: as(admin) }))
        .status,
    ).toBe(409);
    expect((await trpcHttp(s.url, "users.remove", { input: { id: adminRow.id }, headers: as(admin) })).status).toBe(
      409,
    );
    const mem = browser(
      (await trpcHttp(s.url, "auth.login", { input: { email: "mem@lab.test", password: "member password" } }))
        .setCookies,
    );
    expect((await trpcHttp(s.url, "users.list", { headers: as(mem) })).status).toBe(403);
    expect(
      (await trpcHttp(s.url, "users.setRole", { input: { id: memberRow.id, role: "viewer" }, headers: as(admin) }))
        .status,
    ).toBe(200);
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(mem) }))).toMatchObject({ role: "viewer" }); // role is read live
    expect((await trpcHttp(s.url, "users.remove", { input: { id: memberRow.id }, headers: as(admin) })).status).toBe(
      200,
    );
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(mem) }))).toBeNull();
  });

  it("changing the password needs the current one and signs out other sessions", async () => {
    const other = browser(
      (await trpcHttp(s.url, "auth.login", { input: { email: ADMIN.email, password: ADMIN.password } })).setCookies,
    );
    expect(
      (
        await trpcHttp(s.url, "auth.changePassword", {
          input: { currentPassword: "wrong one!", newPassword: "a brand new pass" },
          headers: as(admin),
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await trpcHttp(s.url, "auth.changePassword", {
          input: { currentPassword: ADMIN.password, newPassword: "short" },
          headers: as(admin),
        })
      ).status,
    ).toBe(400);
    const ok = await trpcHttp(s.url, "auth.changePassword", {
      input: { currentPassword: ADMIN.password, newPassword: "a brand new pass" },
      headers: as(admin),
    });
    expect(ok.status).toBe(200);
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(other) }))).toBeNull();
    admin = browser(ok.setCookies);
    expect(data(await trpcHttp(s.url, "auth.me", { headers: as(admin) }))).toMatchObject({ role: "admin" });
    expect(
      (await trpcHttp(s.url, "auth.login", { input: { email: ADMIN.email, password: ADMIN.password } })).status,
    ).toBe(401);
  });
});

describe("personal API tokens", () => {
  it("shows the value once, lists without it, records last use, and stops working when revoked or expired", async () => {
    const created = data(
      await trpcHttp(s.url, "tokens.create", { input: { name: "laptop", ttlDays: 30 }, headers: as(admin) }),
    ) as { id: string; token: string; prefix: string };
    expect(created.token).toMatch(/^pat_/);
    expect(created.token.startsWith(created.prefix)).toBe(true);
    const bearer = { authorization: `Bearer ${created.token}` };
    expect(data(await trpcHttp(s.url, "auth.me", { headers: bearer }))).toMatchObject({ role: "admin", via: "token" });
    // Bearer calls need no CSRF token, but a token cannot mint more tokens or change the password.
    expect((await trpcHttp(s.url, "tokens.create", { input: { name: "child" }, headers: bearer })).status).toBe(403);
    expect(
      (
        await trpcHttp(s.url, "auth.changePassword", {
          input: { currentPassword: "a brand new pass", newPassword: "another new pass" },
          headers: bearer,
        })
      ).status,
    ).toBe(403);

    const list = data(await trpcHttp(s.url, "tokens.list", { headers: as(admin) })) as Array<{
      id: string;
      lastUsedAt: string | null;
    }>;
    expect(JSON.stringify(list)).not.toContain(created.token);
    expect(JSON.stringify(list)).not.toMatch(/tokenHash|token_hash/);
    expect(list.find((x) => x.id === created.id)?.lastUsedAt).not.toBeNull();

    expect((await trpcHttp(s.url, "tokens.revoke", { input: { id: created.id }, headers: as(admin) })).status).toBe(
      200,
    );
    expect((await trpcHttp(s.url, "auth.me", { headers: bearer })).body).toMatchObject({ result: { data: null } });
    expect((await trpcHttp(s.url, "jobs.counts", { headers: bearer })).status).toBe(401);

    const old = data(await trpcHttp(s.url, "tokens.create", { input: { name: "old" }, headers: as(admin) })) as {
      id: string;
      token: string;
    };
    await t.db
      .update(apiTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(apiTokens.id, old.id));
    expect((await trpcHttp(s.url, "jobs.counts", { headers: { authorization: `Bearer ${old.token}` } })).status).toBe(
      401,
    );
  });

  it("a user cannot see or revoke another user's token", async () => {
    const inv = data(await trpcHttp(s.url, "users.invite", { input: { role: "viewer" }, headers: as(admin) })) as {
      path: string;
    };
    const v = browser(
      (
        await trpcHttp(s.url, "auth.acceptInvite", {
          input: { token: tokenOf(inv.path), email: "v@lab.test", name: "V", password: "viewer password" },
        })
      ).setCookies,
    );
    const mine = data(
      await trpcHttp(s.url, "tokens.create", { input: { name: "admin-only" }, headers: as(admin) }),
    ) as { id: string };
    expect(data(await trpcHttp(s.url, "tokens.list", { headers: as(v) }))).toEqual([]);
    expect((await trpcHttp(s.url, "tokens.revoke", { input: { id: mine.id }, headers: as(v) })).status).toBe(404);
  });
});
