import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { queryRows } from "@agentlab/db";
import { ADMIN_URL } from "./helpers/db";
import { memberToken, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { databaseOutage, importTransactionOpen } from "./security-outage-helpers";
import { makePool, toJsonl } from "../fixtures/tasks/generate";

// A database outage in the middle of a task import once took the whole server down: postgres-js
// 3.4.9 defers a small write to a setImmediate, and when its connection was cut meanwhile the
// write dereferences the socket closed() already nulled; thrown from a timer, nothing can catch
// it. patches/postgres+3.4.9.patch guards that write (upstream porsager/postgres#1209, not in a
// release). The driver test runs one transaction in a child process, as the import's transaction
// goes: its backend is cut between two statements and the next one is small. The positive control
// is the same child on a copy of the driver with the patch taken out: it dies of the TypeError.

const PATCH = join(import.meta.dirname, "../../patches/postgres+3.4.9.patch");
const DRIVER = join(import.meta.dirname, "../../node_modules/postgres");
const GUARD = "porsager/postgres#1209";

const CHILD = `
const [, , driver, url] = process.argv;
const { default: postgres } = await import(driver);
let closes = 0;
const sql = postgres(url, { max: 2, onnotice: () => {}, onclose: () => closes++ });
const killer = postgres(url, { max: 1, onnotice: () => {} });
const batch = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ i, text: "x".repeat(50) })));
let fnDone;
const fnFinished = new Promise((r) => (fnDone = r));
const tx = sql.begin(async (t) => {
  try {
    const [{ pid }] = await t\`select pg_backend_pid() as pid\`;
    for (let i = 0; i < 6; i++) {
      if (i === 3) {
        await killer\`select pg_terminate_backend(\${pid}, 10000)\`;
        while (closes === 0) await new Promise((r) => setTimeout(r, 5));
        await t\`select 1\`;
      } else await t\`select length(\${batch}::text) as n\`;
    }
  } finally {
    fnDone();
  }
});
const outcome = await tx.then(() => "committed", (e) => "rejected " + (e.code ?? e.message));
await fnFinished;
const after = await sql\`select 1 as one\`.then((r) => "ok " + r[0].one, (e) => "failed " + e.code);
console.log(JSON.stringify({ outcome, after }));
await Promise.all([sql.end({ timeout: 1 }), killer.end({ timeout: 1 })]);
`;

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "agentlab-pg-guard-"));
  writeFileSync(join(work, "child.mjs"), CHILD);
  // The unpatched driver: a copy of the installed one with the patch's lines (all additions) taken out.
  cpSync(DRIVER, join(work, "postgres"), { recursive: true });
  const file = join(work, "postgres/src/connection.js");
  const patched = readFileSync(file, "utf8");
  const added = addedLines(readFileSync(PATCH, "utf8"), "src/connection.js");
  if (!patched.includes(added)) throw new Error("the installed driver does not carry the patch (postinstall not run?)");
  writeFileSync(file, patched.replace(added, ""));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The lines a patch-package file adds to one file of the package, as one text. */
function addedLines(patch: string, path: string): string {
  const section = patch.split("diff --git ").find((d) => d.startsWith(`a/node_modules/postgres/${path} `));
  if (!section) throw new Error(`the patch does not touch ${path}`);
  const lines = section.split("\n").filter((l) => l.startsWith("+") && !l.startsWith("+++"));
  return lines.map((l) => `${l.slice(1)}\n`).join("");
}

const runChild = (driverDir: string) =>
  spawnSync(process.execPath, [join(work, "child.mjs"), join(driverDir, "src/index.js"), ADMIN_URL], {
    encoding: "utf8",
    timeout: 60_000,
  });

describe("postgres-js with a connection cut under a transaction", () => {
  it("the patched driver rejects the transaction with CONNECTION_CLOSED and the process lives on", () => {
    expect(readFileSync(join(DRIVER, "src/connection.js"), "utf8")).toContain(GUARD);
    const r = runChild(DRIVER);
    expect(r.stderr).not.toContain("TypeError");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toEqual({ outcome: "rejected CONNECTION_CLOSED", after: "ok 1" });
  }, 90_000);

  it("positive control: the driver without the patch dies of the null socket's write", () => {
    expect(readFileSync(join(work, "postgres/src/connection.js"), "utf8")).not.toContain(GUARD);
    const r = runChild(join(work, "postgres"));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("TypeError: Cannot read properties of null (reading 'write')");
    expect(r.stderr).toContain("nextWrite");
  }, 90_000);
});

// The server itself: the database goes away while an import's transaction writes its batches.
describe("a database outage during a task import", () => {
  let s: TestServer;
  let token: string;
  beforeAll(async () => {
    s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
    token = await memberToken(s);
  });
  afterAll(async () => s?.close());

  const upload = (file: Uint8Array) =>
    new Promise<{ status: number; body: { imported?: number } }>((resolve, reject) => {
      const req = request(
        `${s.url}/api/tasks/import?pool=outage`,
        { method: "POST", headers: { authorization: `Bearer ${token}`, "content-length": file.length } },
        (res) => {
          const parts: Buffer[] = [];
          res.on("data", (c: Buffer) => parts.push(c));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString()) }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(file);
    });
  it("fails the import, keeps the server up, and the same file imports in full once the database is back", async () => {
    const N = 8000;
    const file = gzipSync(toJsonl(makePool(N, 4)));
    const first = upload(file);
    await waitFor(() => importTransactionOpen(s.db.url), 300_000, 20);
    const { terminated } = await databaseOutage(s.db.url, 3000);
    expect(terminated).toBeGreaterThan(0);
    const cut = await first;
    expect(cut.status).toBe(500);
    // Alive: it answers, and the all-or-nothing import left nothing behind.
    await waitFor(async () => (await fetch(`${s.url}/api/health`)).status === 200, 60_000, 200);
    const again = await upload(file);
    expect(again).toMatchObject({ status: 200, body: { imported: N } });
    const [n] = await queryRows<{ n: number }>(s.db.db, sql`select count(*)::int as n from tasks`);
    expect(n?.n).toBe(N);
  }, 600_000);
});
