import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { sql } from "drizzle-orm";
import { createApiToken, queryRows } from "@agentlab/db";
import type { TestDb } from "./helpers/db";
import { startTeacherWorld, type TeacherWorld } from "./helpers/teacher-fixture";
import type { Caller, TestApp } from "./auth-helpers";
import { recordTokenCounts } from "../../apps/web/server/teacher/token-counts";
import { simTokenize } from "./helpers/sim-tokenize";
import { main as cli } from "../../apps/web/cli/main";

// Snapshots of a chosen answer quality (a study's data-quality factor): one collection whose
// teacher answers train task 0 wrongly (parses, passes the public test, fails the hidden one) and
// task 1 with prose that does not parse; every other train task is answered right. Each quality
// must take exactly its answers: the wrong answer is the positive control that tells "verified"
// from "unverified" (a filter that admitted everything, or nothing, fails here).

let w: TeacherWorld;
let t: TestDb;
let s: TestApp;
let admin: Caller;
let splitId = "";
let train: string[] = [];
let colId = "";

beforeAll(async () => {
  w = await startTeacherWorld();
  ({ t, s, admin, splitId } = w);
  train = w.parts.train;
  w.fake.modes.set(train[0] ?? "", "wrong");
  w.fake.modes.set(train[1] ?? "", "malformed");
  colId = await w.collectTrain("mixed", "sk-test-QUALITY-KEY-0000");
});

afterAll(async () => {
  await w?.close();
});

const tasksOf = async (id: string) =>
  (await admin.datasets.samples({ id, limit: 100 })).items.map((x) => x.taskKey).sort();

describe("snapshot answer quality", () => {
  it("verified, unverified and public-pass/hidden-fail snapshots each take exactly their answers", async () => {
    const n = train.length;
    const create = (quality?: "verified" | "unverified" | "public_pass_hidden_fail") =>
      admin.datasets.create({ name: `q-${quality ?? "default"}`, splitId, collectionIds: [colId], quality });
    const verified = await create();
    const unverified = await create("unverified");
    const nearMiss = await create("public_pass_hidden_fail");
    expect(verified).toMatchObject({ quality: "verified", sampleCount: n - 2 });
    // The positive control: the wrong answer gets into the unverified snapshot, not the verified one.
    expect(unverified).toMatchObject({ quality: "unverified", sampleCount: n - 1 });
    expect(await tasksOf(unverified.id)).toContain(train[0]);
    expect(await tasksOf(verified.id)).not.toContain(train[0]);
    // The prose answer parses into nothing: no quality takes it.
    expect(await tasksOf(unverified.id)).not.toContain(train[1]);
    expect(nearMiss).toMatchObject({ quality: "public_pass_hidden_fail", sampleCount: 1 });
    expect(await tasksOf(nearMiss.id)).toEqual([train[0]]);
    const [row] = await queryRows<{ quality: string }>(
      t.db,
      sql`select quality from sft_datasets where id = ${nearMiss.id}`,
    );
    expect(row?.quality).toBe("public_pass_hidden_fail");
  });

  it("replays only a verified snapshot (control: the verified one replays)", async () => {
    const unverified = await admin.datasets.create({
      name: "u-replay",
      splitId,
      collectionIds: [colId],
      quality: "unverified",
    });
    await expect(admin.datasets.replay({ id: unverified.id })).rejects.toThrow(
      /only a verified snapshot can be replayed/,
    );
    const verified = await admin.datasets.create({ name: "v-replay", splitId, collectionIds: [colId] });
    expect((await admin.datasets.replay({ id: verified.id })).jobs).toBe(verified.sampleCount);
  });

  it("the database refuses an unknown quality and a changed one (control: the archive mark still changes)", async () => {
    const d = await admin.datasets.create({ name: "q-db", splitId, collectionIds: [colId] });
    await expect(
      queryRows(t.db, sql`update sft_datasets set quality = 'unverified' where id = ${d.id}`),
    ).rejects.toThrow();
    const refused = await queryRows(
      t.db,
      sql`insert into sft_datasets (name, hash, split_id, source_collection_ids, prompt_hash, sample_count, task_count, quality)
          values ('x', 'h', ${splitId}, '{}', 'p', 0, 0, 'great')`,
    ).catch((e: unknown) => e);
    expect(refused).toHaveProperty("cause.constraint_name", "sft_datasets_quality");
    await queryRows(t.db, sql`update sft_datasets set archived_at = now() where id = ${d.id}`);
  });

  it("a shuffled control answers every prompt with another task's answer; budget children inherit the quality", async () => {
    const v = await admin.datasets.create({ name: "v-shuffle", splitId, collectionIds: [colId] });
    const shuffled = await admin.datasets.shuffle({ id: v.id, seed: 1 });
    expect(shuffled).toMatchObject({ quality: "shuffled_control", parentId: v.id, sampleCount: v.sampleCount });
    expect((await admin.datasets.shuffle({ id: v.id, seed: 1 })).id).toBe(shuffled.id); // written once
    const byTask = async (id: string) =>
      new Map(
        (await admin.datasets.samples({ id, limit: 100 })).items.map((x) => [
          x.taskKey,
          { prompt: JSON.stringify(x.messages.slice(0, -1)), answer: x.messages.at(-1)?.content },
        ]),
      );
    const before = await byTask(v.id);
    const after = await byTask(shuffled.id);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [task, x] of after) {
      expect(x.prompt).toBe(before.get(task)?.prompt);
      expect(x.answer).not.toBe(before.get(task)?.answer);
    }
    const measured = await simTokenize(t.db, { datasetId: shuffled.id });
    await recordTokenCounts(s.app.services, shuffled.id, "/models/tiny", measured.tokenize);
    const all = measured.tokenize.supervised_tokens;
    const b = await admin.datasets.budget({ id: shuffled.id, tokens: all, seed: 0 });
    expect(b.dataset).toMatchObject({ quality: "shuffled_control", parentId: shuffled.id });
  });

  it("the CLI creates by quality and refuses an unknown one by its flag", async () => {
    const [u] = await queryRows<{ id: string }>(t.db, sql`select id from users limit 1`);
    const { token } = await createApiToken(t.db, { userId: u?.id ?? "", name: "cli" });
    const dir = mkdtempSync(join(tmpdir(), "agentlab-quality-"));
    const run = async (...argv: string[]) => {
      const out = new PassThrough();
      let text = "";
      out.on("data", (c: Buffer) => (text += c.toString("utf8")));
      const code = await cli(["--server", s.url, "--token", token, ...argv], { out, err: out, cwd: dir });
      return { code, text };
    };
    try {
      const args = ["datasets", "create", "--split", splitId, "--collection", colId, "--name"];
      const ok = await run(...args, "cli-u", "--quality", "unverified");
      expect(ok.code, ok.text).toBe(0);
      expect(ok.text).toContain(`${train.length - 1} samples`);
      expect(ok.text).toContain("unverified (any parseable answer)");
      const bad = await run(...args, "cli-bad", "--quality", "great");
      expect(bad.code).not.toBe(0);
      expect(bad.text).toContain('--quality: "great" is not one of verified, unverified, public_pass_hidden_fail');
      const id = /dataset ([0-9a-f-]{36})/.exec(ok.text)?.[1] ?? "";
      const sh = await run("datasets", "shuffle", id, "--seed", "2");
      expect(sh.code, sh.text).toBe(0);
      expect(sh.text).toContain("answers shuffled across tasks (control)");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
