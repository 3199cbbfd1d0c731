import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createApiToken, schema } from "@agentlab/db";
import { main as cli } from "../../apps/web/cli/main";
import { startTestServer, type TestServer } from "./helpers/server";
import { makePool, makeTask, toJsonl } from "../fixtures/tasks/generate";

// The CLI's side of the archive and search workflow against the real HTTP server: the duplicate-import
// warning, `tasks search`, and `pools list --all` for archived pools.
let s: TestServer;
let token: string;
const dir = mkdtempSync(join(tmpdir(), "agentlab-cli-archive-"));

beforeAll(async () => {
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const [u] = await s.db.db
    .insert(schema.users)
    .values({ email: "m@example.test", name: "m", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  token = (await createApiToken(s.db.db, { userId: u.id, name: "cli" })).token;
});
afterAll(async () => s?.close());

function capture() {
  const chunks: string[] = [];
  const w = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) });
  return { w, text: () => chunks.join("") };
}
async function run(args: string[]) {
  const out = capture();
  const err = capture();
  const code = await cli(args, { out: out.w, err: err.w, cwd: dir }, { AGENTLAB_URL: s.url, AGENTLAB_TOKEN: token });
  return { code, out: out.text(), err: err.text() };
}

describe("cli: duplicates, search, archived pools", () => {
  it("warns when an import repeats tasks already in the pool, and not on a first import", async () => {
    const tasks = makePool(8, 1);
    writeFileSync(join(dir, "a.jsonl"), toJsonl(tasks));
    writeFileSync(join(dir, "b.jsonl"), toJsonl(tasks.map((t) => ({ ...t, id: `${t.id}-re` }))));
    const first = await run(["tasks", "import", "a.jsonl", "--pool", "dup"]);
    expect(first.code).toBe(0);
    expect(first.err).not.toMatch(/warning/);
    const again = await run(["tasks", "import", "b.jsonl", "--pool", "dup"]);
    expect(again.code).toBe(0);
    expect(again.out).toContain("imported 8 tasks");
    expect(again.err).toMatch(/warning: 8 of the imported tasks duplicate tasks already in the pool/);
  });

  it("searches instructions by pool name, with the total", async () => {
    const tasks = [
      makeTask(1, 0, { instruction: "Parse the CSV header." }),
      makeTask(2, 0, { instruction: "Fix the binary search bound." }),
      makeTask(3, 0, { instruction: "Quoted CSV fields lose commas." }),
    ];
    writeFileSync(join(dir, "s.jsonl"), toJsonl(tasks));
    expect((await run(["tasks", "import", "s.jsonl", "--pool", "searchable"])).code).toBe(0);
    const hits = await run(["tasks", "search", "searchable", "csv"]);
    expect(hits.code).toBe(0);
    expect(hits.out.trim().split("\n")).toHaveLength(2);
    expect(hits.out).toContain("«CSV»");
    expect(hits.err).toContain("1-2 of 2 matching tasks");
    const json = JSON.parse((await run(["tasks", "search", "searchable", '"binary search"', "--json"])).out);
    expect(json).toMatchObject({ total: 1, items: [{ taskId: tasks[1]?.id }] });
    expect((await run(["tasks", "search", "searchable", "nothingmatches"])).err).toContain("no instruction matches");
  });

  it("hides an archived pool from `pools list` unless --all", async () => {
    writeFileSync(join(dir, "h.jsonl"), toJsonl(makePool(2, 1, 900)));
    expect((await run(["tasks", "import", "h.jsonl", "--pool", "hidden"])).code).toBe(0);
    expect((await run(["pools", "list"])).out).toMatch(/^hidden\t/m);
    expect((await run(["pools", "archive", "hidden"])).err).toContain("pool hidden archived");
    const listed = (await run(["pools", "list"])).out;
    expect(listed).not.toMatch(/hidden/);
    expect(listed).toMatch(/^searchable\t/m);
    expect((await run(["pools", "list", "--all"])).out).toMatch(/^hidden \(archived\)\t2\t/m);
    // Archived pools still resolve by name, so they can be restored.
    expect((await run(["pools", "archive", "hidden", "--restore"])).code).toBe(0);
    expect((await run(["pools", "list"])).out).toMatch(/^hidden\t/m);
  });
});
