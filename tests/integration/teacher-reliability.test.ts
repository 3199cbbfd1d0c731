import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { PassThrough } from "node:stream";
import OpenAI from "openai";
import { formatAnswer, type TaskSpec } from "@agentlab/core";
import { createApiToken, createSplit, importPool, schema } from "@agentlab/db";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { startTestApp, viewerOf, type Caller, type TestApp } from "./auth-helpers";
import { awaitCollection } from "../../apps/web/server/teacher/collection-runs";
import { main as cli } from "../../apps/web/cli/main";

// Teacher half: a provider that echoes the key in its 401 body, a keyless local server,
// a rate limiter that ENFORCES Retry-After, and a provider that always fails; each against the
// real app, Postgres and the real openai client over loopback.

const KEY = "sk-echo-SECRET-KEY-5b1f0c77aa";
const MODEL = "m-1";
let t: TestDb;
let s: TestApp;
let admin: Caller;
let fake: Server;
let base = "";
let splitId = "";
let userId = "";

const task = (i: number): TaskSpec => ({
  id: `r${String(i).padStart(2, "0")}`,
  source_group: `g${i}`,
  language: "python",
  instruction: `Fix task r${String(i).padStart(2, "0")}.`,
  files: [{ path: "solution.py", role: "main", content: `def f():\n    return ${i} - 1\n` }],
  public_tests: [
    {
      path: "test_public.py",
      content: "from solution import f\n\ndef test_type():\n    assert isinstance(f(), int)\n",
    },
  ],
  hidden_tests: [
    { path: "test_hidden.py", content: `from solution import f\n\ndef test_value():\n    assert f() == ${i}\n` },
  ],
  reference: [{ path: "solution.py", content: `def f():\n    return ${i}\n` }],
  metadata: {},
});

// The rate limiter: one request per WINDOW_MS overall. A request refused with Retry-After that comes
// back for the same sample before the promised moment is counted as too early (and refused again).
const WINDOW_MS = 250;
const limiter = { nextFree: 0, served: 0, refused: 0, tooEarly: 0, promised: new Map<string, number>(), dates: 0 };
const keylessAuth: string[] = [];

function startFake(): Promise<string> {
  fake = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const send = (status: number, json: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(json));
      const ok = () => {
        const content = `Fix.\n\n${formatAnswer([{ path: "solution.py", content: "def f():\n    return 0\n" }])}`;
        send(200, {
          id: "c",
          object: "chat.completion",
          created: 1,
          model: MODEL,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        });
      };
      const route = (req.url ?? "").split("/")[1];
      if (route === "echo")
        return send(401, {
          error: {
            message: `Incorrect API key provided. Request headers: Authorization: ${req.headers.authorization ?? ""}; api-key ${KEY}`,
            type: "invalid_request_error",
          },
        });
      if (route === "down") return send(500, { error: { message: "boom", type: "server_error" } });
      if (route === "keyless") {
        keylessAuth.push(req.headers.authorization ?? "");
        return ok();
      }
      // "limited": the sample is identified by its task and seed.
      const parsed = JSON.parse(body) as { seed?: number; messages: { content: string }[] };
      const sample = `${/Fix task (r\d+)\./.exec(JSON.stringify(parsed.messages))?.[1] ?? "?"}:${parsed.seed ?? "-"}`;
      const now = Date.now();
      const promised = limiter.promised.get(sample);
      if (promised !== undefined && now < promised) limiter.tooEarly++;
      if (now < limiter.nextFree || (promised !== undefined && now < promised)) {
        limiter.refused++;
        // Whole seconds, as the header allows; alternate the two forms the RFC defines.
        const waitS = Math.max(1, Math.ceil((limiter.nextFree - now) / 1000));
        const at = Math.ceil((now + waitS * 1000) / 1000) * 1000;
        const useDate = limiter.refused % 2 === 0;
        if (useDate) limiter.dates++;
        limiter.promised.set(sample, useDate ? at : now + waitS * 1000);
        return send(
          429,
          { error: { message: "rate limited", type: "rate_limit" } },
          { "retry-after": useDate ? new Date(at).toUTCString() : String(waitS) },
        );
      }
      limiter.promised.delete(sample);
      limiter.nextFree = now + WINDOW_MS;
      limiter.served++;
      ok();
    });
  });
  return new Promise((resolve) =>
    fake.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(fake.address() as { port: number }).port}`)),
  );
}

beforeAll(async () => {
  t = await createTestDatabase();
  s = await startTestApp(t);
  base = await startFake();
  const [u] = await t.db
    .insert(schema.users)
    .values({ email: "admin@lab.test", name: "A", passwordHash: "x", role: "admin" })
    .returning();
  if (!u) throw new Error("no user");
  userId = u.id;
  admin = s.caller(viewerOf(u));
  const imp = await importPool(t.db, {
    name: "rel",
    lines: [new TextEncoder().encode(Array.from({ length: 10 }, (_, i) => JSON.stringify(task(i))).join("\n"))],
  });
  if (!imp.ok) throw new Error(JSON.stringify(imp.problems));
  splitId = (await createSplit(t.db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0.2 })).split.id;
});
afterAll(async () => {
  await s?.close();
  await new Promise((r) => fake?.close(r));
  await t?.drop();
});

const collect = async (
  providerId: string,
  extra: { nSamples?: number; concurrency?: number; maxRetries?: number } = {},
) => {
  const col = await admin.collections.create({
    splitId,
    providerId,
    parts: ["train"],
    grade: false,
    nSamples: extra.nSamples ?? 1,
    concurrency: extra.concurrency ?? 2,
    maxRetries: extra.maxRetries ?? 0,
    params: { temperature: 0.5, top_p: 1, max_tokens: 256, seed: 7 },
  });
  await awaitCollection(s.app.services, col.id);
  return admin.collections.byId({ id: col.id });
};

describe("provider errors", () => {
  it("are scrubbed of the key before they are stored or logged", async () => {
    // Positive control: the raw error of this provider carries the key.
    const raw = await new OpenAI({ baseURL: `${base}/echo/v1`, apiKey: KEY, maxRetries: 0 }).chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "x" }] })
      .then(
        () => "",
        (e: unknown) => String(e instanceof Error ? e.message : e),
      );
    expect(raw).toContain(KEY);
    const p = await admin.providers.create({
      name: "echo",
      kind: "openai",
      baseUrl: `${base}/echo/v1`,
      model: "m-echo",
      apiKey: KEY,
      extraParams: {},
    });
    const done = await collect(p.id);
    expect(done.state).toBe("failed");
    expect(done.stopReason).toContain("401");
    expect(done.stopReason).toContain("[redacted]");
    expect(JSON.stringify(done)).not.toContain(KEY);
    expect(JSON.stringify(await admin.collections.list({}))).not.toContain(KEY);
    expect(s.logs.some((l) => l.includes("provider call failed"))).toBe(true);
    for (const l of s.logs) expect(l).not.toContain(KEY);
    for (const l of s.logs) expect(l).not.toContain(KEY.slice(3, 20));
  });
});

describe("a keyless provider", () => {
  it("can be created and collects from a local server without any Authorization header", async () => {
    const p = await admin.providers.create({
      name: "local",
      kind: "openai",
      baseUrl: `${base}/keyless/v1`,
      model: MODEL,
      extraParams: {},
    });
    expect(p.hasApiKey).toBe(false);
    const done = await collect(p.id);
    expect(done).toMatchObject({ state: "done", samplesFailed: 0 });
    expect(done.samplesDone).toBe(done.samplesTotal);
    expect(keylessAuth.length).toBe(done.samplesTotal);
    expect(keylessAuth.every((a) => a === "")).toBe(true);
  });
});

describe("a rate limiter that enforces Retry-After", () => {
  it("detects a client that comes back early (positive control)", async () => {
    const before = limiter.tooEarly;
    const hit = () =>
      fetch(`${base}/limited/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ seed: -1, messages: [{ content: "Fix task r99." }] }),
      });
    await hit();
    expect((await hit()).status).toBe(429);
    expect((await hit()).status).toBe(429);
    expect(limiter.tooEarly).toBeGreaterThan(before);
    limiter.tooEarly = 0;
    limiter.refused = 0;
    limiter.dates = 0;
    limiter.promised.clear();
    await new Promise((r) => setTimeout(r, 1200));
  });

  it("gets no request too early and drops no sample", { timeout: 90_000 }, async () => {
    const p = await admin.providers.create({
      name: "limited",
      kind: "openai",
      baseUrl: `${base}/limited/v1`,
      model: "m-limited",
      apiKey: "sk-limited-key-000000",
      extraParams: {},
    });
    const served = limiter.served;
    const done = await collect(p.id, { nSamples: 2, concurrency: 4, maxRetries: 0 });
    expect(limiter.refused).toBeGreaterThan(0); // the limiter did push back
    expect(limiter.dates).toBeGreaterThan(0); // with both header forms
    expect(limiter.tooEarly).toBe(0);
    expect(done).toMatchObject({ state: "done", samplesFailed: 0, reused: 0 });
    expect(done.samplesDone).toBe(done.samplesTotal);
    expect(limiter.served - served).toBe(done.samplesTotal);
    // Every 429 was counted and is visible on the collection.
    expect(done.stopReason).toMatch(new RegExp(`^${limiter.refused} rate-limited answer\\(s\\) \\(429\\) waited out`));
    console.info(
      JSON.stringify({
        samples: done.samplesTotal,
        served: limiter.served - served,
        refused429: limiter.refused,
        httpDates: limiter.dates,
        tooEarly: limiter.tooEarly,
      }),
    );
  });
});

describe("a collection in which every sample failed", () => {
  it("ends failed, and `agentlab collect` exits non-zero", async () => {
    const p = await admin.providers.create({
      name: "down",
      kind: "openai",
      baseUrl: `${base}/down/v1`,
      model: "m-down",
      apiKey: "sk-down-key-0000000",
      extraParams: {},
    });
    const { token } = await createApiToken(t.db, { userId, name: "cli" });
    const out = new PassThrough();
    let text = "";
    out.on("data", (c: Buffer) => (text += c.toString("utf8")));
    const code = await cli(
      [
        "--server",
        s.url,
        "--token",
        token,
        "collect",
        "--split",
        splitId,
        "--provider",
        p.id,
        "--poll-ms",
        "100",
        "--concurrency",
        "2",
        "--max-retries",
        "1",
      ],
      { out, err: out, cwd: process.cwd() },
    );
    expect(text).toMatch(/^failed\t0\/\d+ samples/m);
    expect(text).toContain("no usable sample");
    expect(code).not.toBe(0);
  }, 60_000);
});
