import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
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
let viewer: ReturnType<typeof createCaller>;
let splitId: string;
let other: string;
const ids = { gain: "", kept: "", running: "", elsewhere: "" };

beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  splitId = (await makeSplit(t.db)).splitId;
  other = (await makeSplit(t.db)).splitId;
  const m = await makeUser(t.db, "member");
  const v = await makeUser(t.db, "viewer");
  member = createCaller(
    ctx({ userId: m.id, email: m.email, name: m.name, role: "member", via: "token", csrfToken: null }),
  );
  viewer = createCaller(
    ctx({ userId: v.id, email: v.email, name: v.name, role: "viewer", via: "token", csrfToken: null }),
  );
  ids.gain = await startExperiment(
    s,
    baseConfig(splitId, { name: "gain", baseModel: { source: "hub", ref: "org/model-a" } }),
  );
  ids.kept = await startExperiment(s, baseConfig(splitId, { name: "kept" }));
  ids.running = await startExperiment(s, baseConfig(splitId, { name: "running" }));
  ids.elsewhere = await startExperiment(s, baseConfig(other, { name: "elsewhere" }));
  await storeReport(t.db, ids.gain, { base: [1, 0, 0, 0, 1, 0, 0, 0], sft: [1, 1, 1, 0, 1, 1, 0, 0] });
  await storeReport(t.db, ids.kept, { base: [1, 0, 1, 0, 1, 0, 0, 0], sft: [1, 0, 1, 0, 1, 0, 0, 0], keepBase: true });
  await storeReport(t.db, ids.elsewhere, { base: [1, 0], sft: [1, 1] });
});
afterAll(async () => t?.drop());

describe("runs table", () => {
  it("lists each run with the figures of its report, a total, and pages", async () => {
    const all = await viewer.runs.list({});
    expect(all.total).toBe(4);
    const gain = all.rows.find((r) => r.id === ids.gain);
    expect(gain).toMatchObject({
      outcome: "adapter_selected",
      baseModel: "org/model-a",
      testN: 8,
      testBase: 0.25,
      testSft: 0.625,
      state: "succeeded",
    });
    expect(gain?.delta).toBeCloseTo(0.375, 12);
    expect(gain?.ciLo).toBeLessThan(gain?.delta ?? 0);
    expect(gain?.p).toBeGreaterThan(0);
    expect(all.rows.find((r) => r.id === ids.kept)).toMatchObject({ outcome: "base_kept", testSft: null, delta: null });
    expect(all.rows.find((r) => r.id === ids.running)).toMatchObject({
      reportId: null,
      outcome: null,
      state: "running",
    });
    const page = await viewer.runs.list({ limit: 3, offset: 3, sort: "name", dir: "asc" });
    expect(page.total).toBe(4);
    expect(page.rows.map((r) => r.name)).toEqual(["running"]);
    expect((await viewer.runs.list({ limit: 2, offset: 10 })).total).toBe(4);
  });

  it("suggests earlier base models, newest first", async () => {
    expect((await viewer.runs.models()).map((m) => [m.ref, m.source])).toEqual([
      ["/models/tiny", "path"],
      ["org/model-a", "hub"],
    ]);
  });

  it("sorts by a figure (runs without one last) and filters by state, outcome, text and split", async () => {
    const byDelta = await viewer.runs.list({ sort: "delta", dir: "desc" });
    expect(byDelta.rows.map((r) => r.name).slice(0, 2)).toEqual(["elsewhere", "gain"]);
    expect(byDelta.rows.slice(2).every((r) => r.delta === null)).toBe(true);
    expect((await viewer.runs.list({ state: "running" })).rows.map((r) => r.name)).toEqual(["running"]);
    expect((await viewer.runs.list({ outcome: "base_kept" })).rows.map((r) => r.name)).toEqual(["kept"]);
    expect((await viewer.runs.list({ q: "MODEL-A" })).rows.map((r) => r.name)).toEqual(["gain"]);
    expect((await viewer.runs.list({ q: "%" })).total).toBe(0);
    expect((await viewer.runs.list({ splitId: other })).rows.map((r) => r.name)).toEqual(["elsewhere"]);
  });

  it("tags and notes a run (members only), filters by tag and searches notes", async () => {
    await member.runs.annotate({
      id: ids.gain,
      tags: ["baseline", "lr:2e-4", "baseline"],
      notes: "first try with the new prompt",
    });
    expect((await viewer.runs.list({ tag: "baseline" })).rows.map((r) => [r.name, r.tags])).toEqual([
      ["gain", ["baseline", "lr:2e-4"]],
    ]);
    expect((await viewer.runs.list({ q: "new prompt" })).rows.map((r) => r.name)).toEqual(["gain"]);
    expect(await viewer.runs.tags()).toEqual(["baseline", "lr:2e-4"]);
    await expect(viewer.runs.annotate({ id: ids.gain, tags: ["x"] })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(member.runs.annotate({ id: ids.gain, tags: ["has space"] })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("archives a finished run out of the table and back, never a running one", async () => {
    await member.runs.archive({ id: ids.kept, archived: true });
    expect((await viewer.runs.list({})).rows.map((r) => r.name)).not.toContain("kept");
    expect((await viewer.runs.list({ archived: true })).rows.map((r) => r.name)).toEqual(["kept"]);
    await member.runs.archive({ id: ids.kept, archived: false });
    expect((await viewer.runs.list({})).total).toBe(4);
    await expect(member.runs.archive({ id: ids.running, archived: true })).rejects.toMatchObject({ code: "CONFLICT" });
  });
});

describe("compare", () => {
  it("puts runs on one split side by side with a per-task outcome matrix", async () => {
    const c = await viewer.runs.compare({ ids: [ids.gain, ids.kept] });
    expect(c.runs.map((r) => r.name)).toEqual(["gain", "kept"]);
    expect(c.runs[0]?.recipe).toMatchObject({ epochs: 2, seeds: [1, 2] });
    expect(c.runs[0]?.dev).toMatchObject({ base: 0.5, sft: 0.75 });
    expect(c.matrix.map((m) => m.taskId)).toEqual(["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"]);
    const t1 = c.matrix.find((m) => m.taskId === "t1");
    // A run that kept the base compares no adapter on test: its column is empty, not a failure.
    expect(t1?.cells.map((x) => x && [x.base, x.sft])).toEqual([["fail_hidden", "pass"], null]);
    expect(t1?.differs).toBe(true);
    const three = await viewer.runs.compare({ ids: [ids.gain, ids.gain, ids.running] });
    expect(three.runs.map((r) => r.name)).toEqual(["gain", "running"]);
    // Recipe and protocol side by side: the base model differs, the protocols do not.
    expect(c.recipe.find((r) => r.field === "baseModel.ref")).toEqual({
      field: "baseModel.ref",
      values: ["org/model-a", expect.any(String)],
      differs: true,
    });
    expect(c.recipe.find((r) => r.field === "training.epochs")?.differs).toBe(false);
    expect(c.protocol.length).toBeGreaterThan(3);
    expect(c.protocolsDiffer).toBe(false);
    expect(c.curves.map((x) => x.devCurve !== null)).toEqual([true, true]);
    // A protocol difference (max new tokens) is flagged (control for the line above).
    await t.db.execute(
      sql`update reports set body = jsonb_set(body, '{protocol,protocol,maxNewTokens}', '999'::jsonb) where experiment_id = ${ids.kept}`,
    );
    const differ = await viewer.runs.compare({ ids: [ids.gain, ids.kept] });
    expect(differ.protocolsDiffer).toBe(true);
    expect(differ.protocol.filter((r) => r.differs).map((r) => r.field)).toEqual(["maxNewTokens"]);
  });

  it("refuses runs on different splits and unknown ids", async () => {
    await expect(viewer.runs.compare({ ids: [ids.gain, ids.elsewhere] })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    await expect(
      viewer.runs.compare({ ids: [ids.gain, "00000000-0000-4000-8000-0000000000ff"] }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    // Positive control for the split check: the same pair of splits is comparable once it is one split.
    await expect(viewer.runs.compare({ ids: [ids.gain, ids.running] })).resolves.toMatchObject({
      runs: [{ name: "gain" }, { name: "running", reportId: null }],
    });
  });
});
