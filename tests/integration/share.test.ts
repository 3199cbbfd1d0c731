import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { schema } from "@agentlab/db";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import type { Context } from "../../apps/web/server/trpc/context";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { storeReport } from "./helpers/reports";
import { baseConfig, makeServices, makeSplit, makeUser, startExperiment } from "./experiments-harness";

let t: TestDb;
let s: Services;
const createCaller = createCallerFactory(appRouter);
const ctx = (viewer: Context["viewer"]): Context => ({
  ...s,
  viewer,
  csrfHeader: null,
  ip: "127.0.0.1",
  sessionToken: null,
  setCookie: () => {},
});

let member: ReturnType<typeof createCaller>;
let anon: ReturnType<typeof createCaller>;
let reportA: string;
let reportB: string;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  const { splitId } = await makeSplit(t.db);
  const u = await makeUser(t.db);
  member = createCaller(
    ctx({ userId: u.id, email: u.email, name: u.name, role: "member", via: "token", csrfToken: null }),
  );
  anon = createCaller(ctx(null));
  // Two stored reports (real ones, named after their experiment), which the share view returns verbatim.
  const a = await startExperiment(s, baseConfig(splitId, { name: "A" }));
  const b = await startExperiment(s, baseConfig(splitId, { name: "B" }));
  reportA = (await storeReport(t.db, a, { base: [1, 0, 1, 0], sft: [1, 1, 1, 0] })).reportId;
  reportB = (await storeReport(t.db, b, { base: [0, 0, 1, 0], sft: [1, 0, 1, 1] })).reportId;
});
afterAll(async () => t?.drop());

describe("share links", () => {
  it("open exactly their one report without a login; the rest of the API stays closed", async () => {
    const { token, path } = await member.share.create({ reportId: reportA });
    expect(path).toBe(`/share/${token}`);
    const viewed = await anon.share.view({ token });
    expect(viewed.report).toMatchObject({ name: "A" });
    await expect(anon.reports.byId({ id: reportA })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(anon.reports.byId({ id: reportB })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(anon.share.view({ token: token + "x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    // The token is stored only as a hash.
    const rows = await t.db.select().from(schema.shareLinks);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it("can be revoked", async () => {
    const { token, link } = await member.share.create({ reportId: reportB, label: "reviewers" });
    expect((await anon.share.view({ token })).report).toMatchObject({ name: "B" });
    await member.share.revoke({ id: link.id });
    // The dead link says why (revoked, and when), not the same words as a mistyped token.
    await expect(anon.share.view({ token })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringMatching(/^this share link was revoked on \d{4}-/),
    });
    await expect(anon.share.view({ token: `${token}x` })).rejects.toMatchObject({
      message: "this share link is invalid",
    });
    expect((await member.share.list({ reportId: reportB }))[0]?.revokedAt).not.toBeNull();
  });

  it("expire", async () => {
    const { token, link } = await member.share.create({ reportId: reportA, expiresInHours: 1 });
    const live = await anon.share.view({ token });
    expect(live.report).toMatchObject({ name: "A" });
    expect(live.expiresAt?.getTime()).toBeGreaterThan(Date.now());
    await t.db
      .update(schema.shareLinks)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(schema.shareLinks.id, link.id));
    await expect(anon.share.view({ token })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringMatching(/^this share link expired on \d{4}-/),
    });
  });

  it("are created by members only", async () => {
    const v = await makeUser(t.db, "viewer");
    const viewer = createCaller(
      ctx({ userId: v.id, email: v.email, name: v.name, role: "viewer", via: "token", csrfToken: null }),
    );
    await expect(viewer.share.create({ reportId: reportA })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(anon.share.create({ reportId: reportA })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
