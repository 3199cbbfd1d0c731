import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { sql } from "drizzle-orm";
import { parseAnswer } from "@agentlab/core";
import { createApiToken, queryRows, setDatasetTokenCounts } from "@agentlab/db";
import type { TestDb } from "./helpers/db";
import { startTeacherWorld, waitFor, type TeacherWorld } from "./helpers/teacher-fixture";
import type { Caller, TestApp } from "./auth-helpers";
import { recordTokenCounts } from "../../apps/web/server/teacher/token-counts";
import { simTokenize } from "./helpers/sim-tokenize";
import { main as cli } from "../../apps/web/cli/main";

// Verified SFT snapshots from a teacher collection (immutable, hashed, replayable) and the
// reference oracle through the CLI; the collection itself: teacher.test.ts.

const KEY = "sk-test-TEACHER-KEY-7f3a9c0d2e";

let w: TeacherWorld;
let t: TestDb;
let s: TestApp;
let admin: Caller;
let splitId = "";
let parts: TeacherWorld["parts"];
let col1 = "";

beforeAll(async () => {
  w = await startTeacherWorld();
  ({ t, s, admin, splitId, parts } = w);
  col1 = await w.collectTrain("fake", KEY);
});

afterAll(async () => {
  await w?.close();
});

describe("teacher datasets", () => {
  it("turns passing candidates into an immutable, hashed snapshot; replay drops a sample that no longer passes", async () => {
    const d = await admin.datasets.create({ name: "v1", splitId, collectionIds: [col1] });
    const n = parts.train.length;
    expect(d).toMatchObject({ sampleCount: n, taskCount: n, oracleSamples: 0 });
    const exp = await admin.datasets.export({ id: d.id });
    expect(createHash("sha256").update(exp.jsonl).digest("hex")).toBe(d.hash);
    expect(
      readFileSync(join(s.app.services.env.AGENTLAB_DATA_DIR, "artifacts", d.hash.slice(0, 2), d.hash), "utf8"),
    ).toBe(exp.jsonl); // agents fetch these bytes
    const lines = exp.jsonl
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { messages: { role: string; content: string }[] });
    expect(lines).toHaveLength(n);
    expect(lines[0]?.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(parseAnswer(lines[0]?.messages[2]?.content ?? "", ["solution.py"]).ok).toBe(true);
    expect(exp.jsonl).not.toContain("HIDDEN_MARKER");
    w.failTask(parts.train[0] ?? null); // e.g. a grader change now fails this one
    const r = await admin.datasets.replay({ id: d.id });
    expect(r.jobs).toBe(n);
    const replay = await waitFor(async () => {
      const x = await admin.datasets.replayStatus({ id: r.id });
      return x.state === "done" && x;
    });
    w.failTask(null);
    expect(replay.kept).toBe(n - 1);
    expect(replay.dropped).toEqual([expect.objectContaining({ taskKey: parts.train[0], verdict: "fail_hidden" })]);
    const verified = await admin.datasets.byId({ id: replay.resultDatasetId ?? "" });
    expect(verified).toMatchObject({ parentId: d.id, sampleCount: n - 1 });
    expect(verified.hash).not.toBe(d.hash);
    expect((await admin.datasets.byId({ id: d.id })).hash).toBe(d.hash); // the original is untouched
    // Immutable in the database itself, not only by convention.
    await expect(
      queryRows(t.db, sql`update sft_samples set task_key = 'x' where dataset_id = ${d.id}`),
    ).rejects.toThrow();
    await expect(queryRows(t.db, sql`delete from sft_samples where dataset_id = ${d.id}`)).rejects.toThrow();
    await expect(queryRows(t.db, sql`update sft_datasets set sample_count = 0 where id = ${d.id}`)).rejects.toThrow();
    const counts = {
      model: "tiny",
      supervisedTokens: 10,
      totalTokens: 30,
      maxTokens: 12,
      chatTemplateSha256: "0".repeat(64),
    };
    expect(await setDatasetTokenCounts(t.db, d.id, counts)).toBe(true);
    expect(await setDatasetTokenCounts(t.db, d.id, { ...counts, supervisedTokens: 11 })).toBe(false);
    await expect(
      queryRows(t.db, sql`update sft_datasets set token_counts = null where id = ${d.id}`),
    ).rejects.toThrow();
  });

  it("never turns a pass from in-process grading into an SFT sample (control: the same pass from the judge is kept)", async () => {
    const n = parts.train.length;
    const [one] = await queryRows<{ id: string }>(
      t.db,
      sql`select c.id from teacher_candidates c join teacher_collection_items i on i.candidate_id = c.id
          where i.collection_id = ${col1} and c.verdict = 'pass' order by c.id limit 1`,
    );
    const setIsolation = (iso: string) =>
      queryRows(
        t.db,
        sql`update teacher_candidates set grade_result = jsonb_set(grade_result, '{isolation}', to_jsonb(${iso}::text)) where id = ${one?.id ?? ""}`,
      );
    await setIsolation("in_process");
    try {
      const d = await admin.datasets.create({ name: "no-in-process", splitId, collectionIds: [col1] });
      expect(d.sampleCount).toBe(n - 1);
    } finally {
      await setIsolation("judge");
    }
    expect((await admin.datasets.create({ name: "judge-again", splitId, collectionIds: [col1] })).sampleCount).toBe(n);
  });

  it("runs the reference oracle through the CLI and exports its dataset", async () => {
    const ref = await admin.providers.create({
      name: "oracle",
      kind: "reference",
      model: "reference",
      extraParams: {},
    });
    const [u] = await queryRows<{ id: string }>(t.db, sql`select id from users limit 1`);
    const { token } = await createApiToken(t.db, { userId: u?.id ?? "", name: "cli" });
    const dir = mkdtempSync(join(tmpdir(), "agentlab-teacher-"));
    const run = async (...argv: string[]) => {
      const out = new PassThrough();
      let text = "";
      out.on("data", (c: Buffer) => (text += c.toString("utf8")));
      const code = await cli(["--server", s.url, "--token", token, ...argv], { out, err: out, cwd: dir });
      return { code, text };
    };
    try {
      // Train only: the dataset layer refuses dev and test tasks.
      const c = await run("collect", "--split", splitId, "--provider", ref.id, "--parts", "train", "--poll-ms", "100");
      expect(c.text).toContain("reference ORACLE");
      expect(c.code).toBe(0);
      const colId = /collection ([0-9a-f-]{36})/.exec(c.text)?.[1] ?? "";
      expect(c.text).toContain(`verdicts: pass=${parts.train.length}`);
      const d = await run("datasets", "create", "--split", splitId, "--collection", colId, "--name", "oracle");
      expect(d.code).toBe(0);
      const id = /dataset ([0-9a-f-]{36})/.exec(d.text)?.[1] ?? "";
      const e = await run("datasets", "export", id, "--out", "o.jsonl");
      expect(e.code).toBe(0);
      const bytes = readFileSync(join(dir, "o.jsonl"));
      expect(e.text).toContain(`sha256 ${createHash("sha256").update(bytes).digest("hex")}`);
      expect(e.text).toContain("reference ORACLE");
      // Token matching from the terminal: refused before the snapshot's tokens are measured, then a
      // child snapshot (B = every measured token: this small pool has no half within ±0.5%; the
      // draw itself is tested in dataset-budget).
      const early = await run("datasets", "budget", id, "--tokens", "100", "--seed", "1");
      expect(early.code).not.toBe(0);
      expect(early.text).toContain("tokenize it with the base model first");
      const measured = await simTokenize(t.db, { datasetId: id });
      await recordTokenCounts(s.app.services, id, "/models/tiny", measured.tokenize);
      const all = measured.tokenize.supervised_tokens;
      const b = await run("datasets", "budget", id, "--tokens", String(all), "--seed", "3");
      expect(b.code, b.text).toBe(0);
      expect(b.text).toMatch(new RegExp(`\\(parent ${id}\\)`));
      expect(b.text).toContain(`supervised tokens ${all} for B = ${all}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
