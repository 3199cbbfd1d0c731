import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { schema } from "@agentlab/db";
import type { StudyDefinitionInput } from "@agentlab/core";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import type { Context } from "../../apps/web/server/trpc/context";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { storeReport } from "./helpers/reports";
import { baseConfig, makeServices, makeSplit, makeUser, startExperiment } from "./experiments-harness";

// Study share links on the real Postgres, through the tRPC routers: one link opens one study
// (arms, claim, report; never its definition's provider and dataset ids or the base model's
// path), dies when revoked or expired like a report's link, and a report's token opens no study
// nor a study's token a report.

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

const PROVIDER = "00000000-0000-4000-8000-00000000000a";
const DATASET = "00000000-0000-4000-8000-00000000000b";
const MODEL_PATH = "/models/private-folder/tiny";
let member: ReturnType<typeof createCaller>;
let anon: ReturnType<typeof createCaller>;
let splitId = "";
let reportId = "";
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId } = await makeSplit(t.db));
  const u = await makeUser(t.db);
  member = createCaller(
    ctx({ userId: u.id, email: u.email, name: u.name, role: "member", via: "token", csrfToken: null }),
  );
  anon = createCaller(ctx(null));
  const exp = await startExperiment(s, baseConfig(splitId, { name: "stand-alone" }));
  reportId = (await storeReport(t.db, exp, { base: [1, 0, 1, 0], sft: [1, 1, 1, 0] })).reportId;
});
afterAll(async () => t?.drop());

const definition = (name: string): StudyDefinitionInput => ({
  name,
  splitId,
  baseModel: { source: "path", ref: MODEL_PATH },
  evaluation: { graderVersion: "sim-grader/1" },
  seeds: [1, 2, 3],
  reference: { name: "reference", recipe: { teacher: { providerId: PROVIDER }, datasetId: DATASET } },
  arms: [{ name: "high-lr", factor: "training.learningRate", recipe: { training: { learningRate: 1e-3 } } }],
  contrasts: [{ arms: ["high-lr", "reference"] }],
});

describe("study share links", () => {
  it("open their one study without a login, without the definition's ids and paths", async () => {
    const { id, experimentIds } = await member.studies.create(definition("shared study"));
    const { token, path, link } = await member.share.create({ studyId: id, label: "reviewers" });
    expect(path).toBe(`/share/study/${token}`);
    expect(link).toMatchObject({ studyId: id, reportId: null });
    expect((await member.share.list({ studyId: id })).map((l) => l.id)).toEqual([link.id]);

    const shared = await anon.share.study({ token });
    expect(shared.study).toMatchObject({ name: "shared study", state: "running", report: null, testClaim: null });
    expect(shared.study.arms.map((a) => [a.name, a.role, a.factor])).toEqual([
      ["reference", "reference", null],
      ["high-lr", "arm", "training.learningRate"],
    ]);
    const text = JSON.stringify(shared);
    for (const secret of [PROVIDER, DATASET, MODEL_PATH, ...experimentIds]) expect(text).not.toContain(secret);
    // Positive control: the workspace's own view of the study has them.
    const inside = JSON.stringify(await member.studies.byId({ id }));
    for (const secret of [PROVIDER, DATASET, MODEL_PATH, ...experimentIds]) expect(inside).toContain(secret);
    // The token opens nothing else: the rest of the API stays closed to its holder.
    await expect(anon.studies.byId({ id })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("a study's token opens no report, a report's token no study (each opens its own: positive control)", async () => {
    const { id } = await member.studies.create(definition("kinds"));
    const study = await member.share.create({ studyId: id });
    const report = await member.share.create({ reportId });
    await expect(anon.share.view({ token: study.token })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: "this share link opens a study, not a report",
    });
    await expect(anon.share.study({ token: report.token })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: "this share link opens a report, not a study",
    });
    expect((await anon.share.view({ token: report.token })).report).toMatchObject({ name: "stand-alone" });
    expect((await anon.share.study({ token: study.token })).study.name).toBe("kinds");
    await expect(member.share.create({ studyId: "00000000-0000-4000-8000-0000000000ff" })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: "no such study",
    });
  });

  it("die when revoked or expired, saying which and when", async () => {
    const { id } = await member.studies.create(definition("dead links"));
    const revoked = await member.share.create({ studyId: id });
    await member.share.revoke({ id: revoked.link.id });
    await expect(anon.share.study({ token: revoked.token })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringMatching(/^this share link was revoked on \d{4}-/),
    });
    const expiring = await member.share.create({ studyId: id, expiresInHours: 1 });
    const live = await anon.share.study({ token: expiring.token });
    expect(live.expiresAt?.getTime()).toBeGreaterThan(Date.now());
    await t.db
      .update(schema.shareLinks)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(schema.shareLinks.id, expiring.link.id));
    await expect(anon.share.study({ token: expiring.token })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringMatching(/^this share link expired on \d{4}-/),
    });
    await expect(anon.share.study({ token: `${expiring.token}x` })).rejects.toMatchObject({
      message: "this share link is invalid",
    });
  });

  it("show a study that lost an arm as failed, the arm's state named, without its error text", async () => {
    const { id, experimentIds } = await member.studies.create(definition("lost an arm"));
    const { token } = await member.share.create({ studyId: id });
    await member.experiments.cancel({ id: experimentIds[1] ?? "" });
    const shared = await anon.share.study({ token });
    expect(shared.study.state).toBe("failed");
    expect(shared.study.arms.map((a) => [a.name, a.state])).toEqual([
      ["reference", "running"],
      ["high-lr", "canceled"],
    ]);
    expect(JSON.stringify(shared)).not.toContain("canceled by a user");
    // Inside the workspace the reason is there in full.
    expect((await member.studies.byId({ id })).error).toContain('arm "high-lr" canceled (canceled by a user)');
  });

  it("refuses a link to both a report and a study in the database (one target per link)", async () => {
    const { id } = await member.studies.create(definition("one target"));
    const both = await t.db
      .insert(schema.shareLinks)
      .values({ reportId, studyId: id, tokenHash: "x".repeat(64) })
      .then(
        () => "inserted",
        (e: { cause?: { message?: string } }) => String(e.cause?.message),
      );
    expect(both).toMatch(/share_links_one_target/);
  });
});
