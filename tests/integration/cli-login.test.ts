import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiToken, schema } from "@agentlab/db";
import { runCli } from "./helpers/cli";
import { startTestServer, type TestServer } from "./helpers/server";

// `agentlab login` against the real server: the token is read from standard input, checked,
// stored 0600, used by later commands for that server only, and forgotten by `logout`.

let s: TestServer;
let token: string;
const config = mkdtempSync(join(tmpdir(), "agentlab-login-"));
const file = join(config, "credentials.json");

const run = (args: string[], env: Record<string, string>, stdin = "") =>
  runCli(args, { cwd: config, env: { AGENTLAB_CONFIG_DIR: config, ...env }, stdin });

beforeAll(async () => {
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const [u] = await s.db.db
    .insert(schema.users)
    .values({ email: "login@example.test", name: "login", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  token = (await createApiToken(s.db.db, { userId: u.id, name: "cli login" })).token;
});
afterAll(async () => s?.close());

describe("agentlab login", () => {
  it("refuses a wrong token and stores nothing", async () => {
    const r = await run(["login"], { AGENTLAB_URL: s.url }, "alt_not-a-real-token\n");
    expect(r).toMatchObject({ code: 1, err: expect.stringContaining(`token rejected by ${s.url}`) });
    expect(() => statSync(file)).toThrow();
  });

  it("without a login a command asks for one (control for the next test)", async () => {
    const r = await run(["agents", "list"], { AGENTLAB_URL: s.url });
    expect(r).toMatchObject({ code: 2, err: expect.stringContaining("no API token: run agentlab login") });
  });

  it("stores a checked token 0600 and later commands use it for that server", async () => {
    const r = await run(["login"], { AGENTLAB_URL: s.url }, `${token}\n`);
    expect(r).toMatchObject({ code: 0, out: expect.stringContaining("as login@example.test (member)") });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ server: s.url, token });
    // No URL and no token in the environment: both come from the stored login.
    expect(await run(["agents", "list", "--json"], {})).toMatchObject({ code: 0 });
  });

  it("never sends the stored token to another server", async () => {
    const r = await run(["agents", "list"], { AGENTLAB_URL: "http://127.0.0.1:9" });
    expect(r).toMatchObject({ code: 2, err: expect.stringContaining("no API token") });
  });

  it("names the file and the field when the stored login is damaged", async () => {
    writeFileSync(file, JSON.stringify({ server: s.url }));
    const r = await run(["agents", "list"], {});
    expect(r).toMatchObject({ code: 2, err: expect.stringContaining(`${file}: token:`) });
  });

  it("login replaces a damaged file; logout forgets it", async () => {
    expect((await run(["login"], { AGENTLAB_URL: s.url }, `${token}\n`)).code).toBe(0);
    expect((await run(["logout"], {})).out).toContain(`removed ${file}`);
    expect((await run(["agents", "list"], { AGENTLAB_URL: s.url })).code).toBe(2);
    expect((await run(["logout"], {})).out).toContain("not logged in");
  });
});
