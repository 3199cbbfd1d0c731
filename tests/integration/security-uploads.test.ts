import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { enrollTestAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// Partial uploads are bound to the agent that started them, limited per agent (bytes
// and number open), and expire (a periodic sweep removes them).

let s: TestServer;
let a = "";
let b = "";
const QUOTA = 1000;
beforeAll(async () => {
  s = await startTestServer({
    AGENTLAB_MAX_UPLOAD_BYTES: "800",
    AGENTLAB_UPLOAD_QUOTA_BYTES: String(QUOTA),
    AGENTLAB_MAX_OPEN_UPLOADS: "2",
    AGENTLAB_UPLOAD_EXPIRY_MS: "10000",
  });
  a = (await enrollTestAgent(s.db, "a")).credential;
  b = (await enrollTestAgent(s.db, "b")).credential;
});
afterAll(async () => {
  await s?.close();
});

const blob = (n: number, fill: number) => {
  const bytes = Buffer.alloc(n, fill);
  return { bytes, sha: createHash("sha256").update(bytes).digest("hex") };
};
const url = (sha: string, complete = false) => `${s.url}/api/artifacts/${sha}${complete ? "/complete" : ""}`;
const patch = (cred: string, sha: string, offset: number, body: Buffer) =>
  fetch(url(sha), {
    method: "PATCH",
    headers: { authorization: `Bearer ${cred}`, "upload-offset": String(offset) },
    body,
    duplex: "half",
  } as RequestInit).then(
    async (r) => ({
      status: r.status,
      body: (await r.json().catch(() => null)) as { offset?: number; error?: { message: string } } | null,
    }),
    () => ({ status: 0, body: null }),
  );
/** A streamed body (no Content-Length: chunked), `size` bytes at a time. */
const chunked = (bytes: Buffer, size: number) =>
  new ReadableStream<Uint8Array>({
    start(ctrl) {
      for (let i = 0; i < bytes.length; i += size) ctrl.enqueue(new Uint8Array(bytes.subarray(i, i + size)));
      ctrl.close();
    },
  });
const head = async (cred: string, sha: string) =>
  Number(
    (await fetch(url(sha), { method: "HEAD", headers: { authorization: `Bearer ${cred}` } })).headers.get(
      "upload-offset",
    ),
  );
const complete = (cred: string, sha: string) =>
  fetch(url(sha, true), { method: "POST", headers: { authorization: `Bearer ${cred}` } }).then((r) => r.status);

describe("a partial upload", () => {
  it("belongs to the agent that started it: another agent can neither see, append to nor complete it", async () => {
    const { bytes, sha } = blob(400, 1);
    expect((await patch(a, sha, 0, bytes.subarray(0, 200))).status).toBe(200);
    expect(await head(a, sha)).toBe(200);
    expect(await head(b, sha)).toBe(0);
    // B tries to continue A's upload at A's offset, and to publish it.
    expect((await patch(b, sha, 200, bytes.subarray(200))).status).toBe(409);
    expect(await complete(b, sha)).toBe(404);
    expect(await head(a, sha)).toBe(200);
    // Positive control: the owner continues and publishes it.
    expect((await patch(a, sha, 200, bytes.subarray(200))).body).toEqual({ offset: 400 });
    expect(await complete(a, sha)).toBe(200);
    const got = await fetch(url(sha), { headers: { authorization: `Bearer ${b}` } });
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("counts against its agent's quota of open uploads and of bytes", async () => {
    const one = blob(600, 2);
    const two = blob(300, 3);
    const three = blob(100, 4);
    expect((await patch(a, one.sha, 0, one.bytes)).status).toBe(200);
    // 600 held: a second upload may take up to the 400 bytes left; 300 fits.
    expect((await patch(a, two.sha, 0, two.bytes)).status).toBe(200);
    // A third open upload is refused; agent B has its own allowance.
    expect((await patch(a, three.sha, 0, three.bytes)).status).toBe(429);
    expect((await patch(b, three.sha, 0, three.bytes)).status).toBe(200);
    expect(await complete(a, one.sha)).toBe(200);
    // One slot free again, but only 1000 - 300 = 700 bytes of quota: 800 bytes are refused.
    const big = blob(800, 5);
    const refused = await patch(a, big.sha, 0, big.bytes);
    // An answer, not a reset connection mid-body (status 0 here, what the agent saw as "fetch failed").
    expect(refused).toMatchObject({ status: 429, body: { error: { message: expect.stringContaining("quota") } } });
    expect(await head(a, big.sha)).toBeLessThanOrEqual(QUOTA - 300);
    // The same for a body sent in chunks without a length (how the agent streams a file).
    const streamed = await patch(a, big.sha, await head(a, big.sha), chunked(big.bytes, 100) as never);
    expect(streamed).toMatchObject({ status: 429, body: { error: { message: expect.stringContaining("quota") } } });
    expect(await complete(a, two.sha)).toBe(200);
    expect(await complete(b, three.sha)).toBe(200);
  });

  it("expires: the periodic sweep removes one nobody wrote to in AGENTLAB_UPLOAD_EXPIRY_MS", async () => {
    const stale = blob(100, 6);
    const fresh = blob(100, 7);
    expect((await patch(b, stale.sha, 0, stale.bytes.subarray(0, 50))).status).toBe(200);
    expect((await patch(b, fresh.sha, 0, fresh.bytes.subarray(0, 50))).status).toBe(200);
    const dir = join(s.dataDir, "artifacts", "partial");
    const owner = readdirSync(dir).find((d) => existsSync(join(dir, d, stale.sha)));
    if (!owner) throw new Error("partial file not found");
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(join(dir, owner, stale.sha), hourAgo, hourAgo);
    await waitFor(async () => !existsSync(join(dir, owner, stale.sha)), 5000);
    expect(await head(b, stale.sha)).toBe(0);
    expect(await head(b, fresh.sha)).toBe(50);
    // A fresh partial stays until it is old too (then also the refused upload's leftover of the quota test goes).
    expect(await s.app.services.artifacts.sweepPartials(10_000, Date.now() + 60_000)).toBe(2);
    expect(await head(b, fresh.sha)).toBe(0);
  });

  it("over the per-artifact limit answers 413, and with the quota full 429 before reading the body", async () => {
    const c = (await enrollTestAgent(s.db, "c")).credential;
    const huge = blob(900, 8);
    const over = await patch(c, huge.sha, 0, chunked(huge.bytes, 100) as never);
    expect(over).toMatchObject({ status: 413, body: { error: { message: expect.stringContaining("800 bytes") } } });
    // d holds 800 + 200 = its whole quota; the next bytes of its open upload are refused at once.
    const d = (await enrollTestAgent(s.db, "d")).credential;
    const [x, y] = [blob(800, 9), blob(300, 10)];
    expect((await patch(d, x.sha, 0, x.bytes)).status).toBe(200);
    expect((await patch(d, y.sha, 0, y.bytes.subarray(0, 200))).status).toBe(200);
    const full = await patch(d, y.sha, 200, y.bytes.subarray(200));
    expect(full).toMatchObject({ status: 429, body: { error: { message: expect.stringContaining("quota") } } });
    // Positive control: with room again the same bytes go through.
    expect(await complete(d, x.sha)).toBe(200);
    expect((await patch(d, y.sha, 200, y.bytes.subarray(200))).status).toBe(200);
    expect(await complete(d, y.sha)).toBe(200);
  });
});
