import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { Writable } from "node:stream";
import { eq, sql } from "drizzle-orm";
import { createApiToken, importPool, queryRows, schema } from "@agentlab/db";
import { main as cli } from "../../apps/web/cli/main";
import { startTestServer, type TestServer } from "./helpers/server";
import { makePool, makeTask, toJsonl } from "../fixtures/tasks/generate";

let s: TestServer;
let memberToken: string;
let viewerToken: string;

async function addUser(role: "member" | "viewer") {
  const [u] = await s.db.db
    .insert(schema.users)
    .values({ email: `${role}@example.test`, name: role, passwordHash: "x", role })
    .returning();
  if (!u) throw new Error("no user");
  return (await createApiToken(s.db.db, { userId: u.id, name: "cli" })).token;
}

beforeAll(async () => {
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  memberToken = await addUser("member");
  viewerToken = await addUser("viewer");
});
afterAll(async () => s?.close());

const upload = (pool: string, body: Uint8Array | string, token = memberToken) =>
  fetch(`${s.url}/api/tasks/import?pool=${pool}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body,
  });
const countTasks = async () =>
  (await queryRows<{ n: number }>(s.db.db, sql`select count(*)::int as n from tasks`))[0]?.n;
const countPools = async () =>
  (await queryRows<{ n: number }>(s.db.db, sql`select count(*)::int as n from task_pools`))[0]?.n;

function capture() {
  const chunks: string[] = [];
  const w = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) });
  return { w, text: () => chunks.join("") };
}
const runCli = async (args: string[]) => {
  const out = capture();
  const err = capture();
  const code = await cli(
    args,
    { out: out.w, err: err.w, cwd: process.cwd() },
    { AGENTLAB_URL: s.url, AGENTLAB_TOKEN: memberToken },
  );
  return { code, out: out.text(), err: err.text() };
};

describe("task import", () => {
  it("reports every rejection reason with file line, field and message over HTTP, and writes nothing", async () => {
    const res = await upload("bad", readFileSync("tests/fixtures/tasks/invalid.jsonl"));
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      ok: boolean;
      problemCount: number;
      problems: { line: number; field: string; code: string; message: string }[];
    };
    expect(body.ok).toBe(false);
    expect(body.problems.map(({ line, field, code, message }) => ({ line, field, code, message }))).toEqual([
      { line: 2, field: "instruction", code: "missing_field", message: 'missing required field "instruction"' },
      { line: 3, field: "files[0].content", code: "wrong_type", message: "expected string, got number" },
      { line: 4, field: "id", code: "duplicate_id", message: 'duplicate id "synth/g100/v0" (first used on line 1)' },
      {
        line: 5,
        field: "public_tests[0].path",
        code: "unsafe_path",
        message: "unsafe path \"../escape.py\": contains a '..' segment",
      },
      {
        line: 6,
        field: "hidden_tests[0].path",
        code: "unsafe_path",
        message: 'unsafe path "/etc/passwd": is absolute (must be relative)',
      },
      { line: 7, field: "instruction", code: "invalid_utf8", message: "contains bytes that are not valid UTF-8" },
      {
        line: 8,
        field: "files",
        code: "no_main_file",
        message: 'no file has role "main"; at least one main file is required',
      },
      { line: 9, field: "hidden_tests", code: "no_hidden_test", message: "at least one hidden test is required" },
      {
        line: 10,
        field: "reference[0].path",
        code: "reference_not_main",
        message: 'reference path "other.py" names no main file',
      },
      {
        line: 11,
        field: "files[0].content",
        code: "too_large",
        message: "file is larger than the 262144-byte limit per file",
      },
    ]);
    expect(await countPools()).toBe(0);
    expect(await countTasks()).toBe(0);
  });

  it("imports nothing from a gzipped file with 1 bad line among 1,000 good ones", async () => {
    const tasks: unknown[] = makePool(1001, 4);
    tasks[617] = { ...makeTask(9999, 0), files: [{ path: "C:\\x.py", role: "main", content: "" }], reference: [] };
    const res = await upload("big", gzipSync(toJsonl(tasks)));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { problems: { line: number; field: string; code: string }[] };
    expect(body.problems).toEqual([
      expect.objectContaining({ line: 618, field: "files[0].path", code: "unsafe_path" }),
    ]);
    expect(await countTasks()).toBe(0);
    expect(await countPools()).toBe(0);
  });

  it("imports a gzipped pool all at once; an id already in the pool rejects the next file whole", async () => {
    const res = await upload("p1", gzipSync(toJsonl(makePool(1000, 4))));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, imported: 1000, exactDuplicates: 0, mergeProposals: 0 });
    const again = [...makePool(10, 2, 5000), makeTask(3, 1)]; // the last one is already in p1 (line 11)
    const res2 = await upload("p1", toJsonl(again));
    expect(res2.status).toBe(400);
    expect(((await res2.json()) as { problems: unknown[] }).problems).toEqual([
      expect.objectContaining({
        line: 11,
        field: "id",
        code: "duplicate_id",
        message: 'duplicate id "synth/g3/v1" (already in pool "p1")',
      }),
    ]);
    expect(await countTasks()).toBe(1000);
    const [pool] = await s.db.db.select().from(schema.taskPools).where(eq(schema.taskPools.name, "p1"));
    expect(pool).toMatchObject({ taskCount: 1000, groupCount: 250 });
  });

  it("refuses callers without the member role, bad pool names and oversized bodies", async () => {
    expect((await upload("p2", toJsonl(makePool(2)), viewerToken)).status).toBe(403);
    expect((await fetch(`${s.url}/api/tasks/import?pool=p2`, { method: "POST", body: "x" })).status).toBe(401);
    expect((await upload("../x", toJsonl(makePool(2)))).status).toBe(400);
    const big = await fetch(`${s.url}/api/tasks/import?pool=p2`, {
      method: "POST",
      headers: { authorization: `Bearer ${memberToken}`, "content-length": String(300 * 1024 * 1024) },
      body: "x",
    }).catch(() => null);
    // Either the 413 arrives or the server closes the mismatched request; it never imports.
    if (big) expect(big.status).toBe(413);
    expect(await countPools()).toBe(1);
  });

  it("counts exact and normalized-code duplicates on import", async () => {
    const a = makeTask(7000, 0);
    const exact = { ...a, id: "dup/exact", source_group: "dup" };
    const norm = {
      ...a,
      id: "dup/norm",
      source_group: "dup",
      files: [{ ...a.files[0], content: `# reformatted\n${a.files[0]?.content.replaceAll("    ", "\t")}` }],
    };
    const res = await upload("dups", toJsonl([a, exact, norm]));
    expect(await res.json()).toMatchObject({ ok: true, imported: 3, exactDuplicates: 2, normalizedDuplicates: 3 });
  });

  it("the CLI validates offline, imports a file and a task directory, lists and exports (round trip)", async () => {
    const v = await runCli(["tasks", "validate", "tests/fixtures/tasks/invalid.jsonl"]);
    expect(v.code).toBe(1);
    expect(v.out).toContain(
      "tests/fixtures/tasks/invalid.jsonl:9: hidden_tests: at least one hidden test is required [no_hidden_test]",
    );
    expect((await runCli(["tasks", "validate", "tests/fixtures/tasks/valid.jsonl", "--json"])).out).toContain(
      '"valid":true',
    );
    const imp = await runCli(["tasks", "import", "tests/fixtures/tasks/valid.jsonl", "--pool", "cli"]);
    expect(imp).toMatchObject({ code: 0 });
    expect(imp.out).toContain("imported 12 tasks");
    const bad = await runCli(["tasks", "import", "tests/fixtures/tasks/invalid.jsonl", "--pool", "cli"]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain("invalid.jsonl:10: reference[0].path");
    const dir = await runCli(["tasks", "import-dir", "tests/fixtures/tasks/dir-layout", "--pool", "cli"]);
    expect(dir.out).toContain("imported 2 tasks");
    const list = await runCli(["pools", "list"]);
    expect(list.out).toMatch(/^cli\t14\t/m);
    const exp = await runCli(["pools", "export", "cli"]);
    const exported = exp.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string });
    expect(exported).toHaveLength(14);
    const original = readFileSync("tests/fixtures/tasks/valid.jsonl", "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string });
    for (const t of original) expect(exported.find((e) => e.id === t.id)).toEqual(t);
    const fromDir = exported.find((e) => e.id === "synth/g200/v0") as { files: { role: string }[] } | undefined;
    expect(fromDir?.files.map((f) => f.role)).toEqual(["main"]);
  });

  it("importPool (the bootstrap's entry point) takes an iterable of chunks", async () => {
    const res = await importPool(s.db.db, {
      name: "builtin-like",
      builtin: true,
      lines: [new TextEncoder().encode(toJsonl(makePool(8)))],
    });
    expect(res).toMatchObject({ ok: true, imported: 8 });
  });
});
