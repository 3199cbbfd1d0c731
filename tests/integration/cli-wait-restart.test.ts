import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createApiToken, schema, setExperimentState } from "@agentlab/db";
import { main as cli } from "../../apps/web/cli/main";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";
import { baseConfig, makeSplit, startExperiment } from "./experiments-harness";

// `agentlab experiments wait` follows an experiment across a server restart: the experiment is in
// the database, so a few seconds without an answer are waited out instead of ending with exit 1.

let s: TestServer;
let token: string;
const dir = mkdtempSync(join(tmpdir(), "agentlab-cli-wait-"));

beforeAll(async () => {
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const [u] = await s.db.db
    .insert(schema.users)
    .values({ email: "w@example.test", name: "w", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  token = (await createApiToken(s.db.db, { userId: u.id, name: "cli" })).token;
}, 60_000);
afterAll(async () => s?.close());

function capture() {
  const chunks: string[] = [];
  return {
    w: new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) }),
    text: () => chunks.join(""),
  };
}

describe("experiments wait", () => {
  it("keeps waiting through a server restart and exits 0 when the experiment succeeds", async () => {
    const { splitId } = await makeSplit(s.db.db);
    // No agent: its train stage stays queued, so the experiment stays running until we end it.
    const id = await startExperiment(s.app.services, baseConfig(splitId, { name: "waited" }));
    const out = capture();
    const err = capture();
    const waiting = cli(
      ["experiments", "wait", id, "--interval", "0.2", "--timeout", "60"],
      { out: out.w, err: err.w, cwd: dir },
      { AGENTLAB_URL: s.url, AGENTLAB_TOKEN: token },
    );
    await waitFor(async () => err.text().includes("%"), 20_000);
    // Down for 2 s: every poll in that time gets no answer (what used to end the wait with 1).
    await s.restart(2000);
    await setExperimentState(s.db.db, id, "succeeded");
    expect(await waiting).toBe(0);
    expect(err.text()).toContain("the server does not answer; still waiting");
    expect(err.text()).toContain("the server answers again");
    expect(out.text()).toContain("waited: succeeded");
  }, 90_000);

  it("still fails at once for an answer that will not change (a 4xx)", async () => {
    const err = capture();
    const code = await cli(
      ["experiments", "wait", "00000000-0000-4000-8000-0000000000ff", "--interval", "0.2"],
      { out: capture().w, err: err.w, cwd: dir },
      { AGENTLAB_URL: s.url, AGENTLAB_TOKEN: token },
    );
    expect(code).not.toBe(0);
    expect(err.text()).not.toContain("still waiting");
  });
});
