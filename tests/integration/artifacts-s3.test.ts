import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { UploadPlan } from "@agentlab/core";
import { fetchArtifact, uploadArtifact } from "../../apps/agent/src/artifacts";
import { publishBlob } from "../../apps/web/server/artifacts/publish";
import { enrollTestAgent, startTestServer, type TestServer } from "./helpers/server";
import { MOTO_BIN, MOTO_CREDENTIALS, motoInstalled, startMoto, type MotoServer } from "./s3/moto-server";

// The S3-compatible artifact store against a real S3 server (moto's standalone server, started
// here): presigned multipart uploads resumed after an interruption, presigned downloads by an
// agent, the hash check before publication, and the per-uploader limits.
const MiB = 1024 * 1024;
const installed = motoInstalled();
if (!installed)
  console.warn(`SKIPPING artifacts-s3: ${MOTO_BIN} is missing; run scripts/setup-s3-test.sh (.ci/run does)`);

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe.skipIf(!installed)("artifacts in S3-compatible storage (real moto server)", () => {
  let moto: MotoServer;
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    moto = await startMoto();
    server = await startTestServer({
      AGENTLAB_LOCAL_AGENT: "0",
      AGENTLAB_ARTIFACT_STORE: "s3",
      AGENTLAB_S3_ENDPOINT: moto.endpoint,
      AGENTLAB_S3_BUCKET: moto.bucket,
      AGENTLAB_S3_ACCESS_KEY_ID: MOTO_CREDENTIALS.accessKeyId,
      AGENTLAB_S3_SECRET_ACCESS_KEY: MOTO_CREDENTIALS.secretAccessKey,
      AGENTLAB_S3_FORCE_PATH_STYLE: "1",
      AGENTLAB_S3_PART_BYTES: String(5 * MiB),
      AGENTLAB_MAX_UPLOAD_BYTES: String(16 * MiB),
      AGENTLAB_UPLOAD_QUOTA_BYTES: String(20 * MiB),
      AGENTLAB_MAX_OPEN_UPLOADS: "2",
    });
    dir = await mkdtemp(join(tmpdir(), "agentlab-s3-"));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await moto?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const agent = async (name: string) => {
    const { credential } = await enrollTestAgent(server.db, name);
    return { credential, auth: { authorization: `Bearer ${credential}` } };
  };
  const planOf = async (auth: Record<string, string>, sha: string, sizeBytes: number) => {
    const res = await fetch(`${server.url}/api/artifacts/${sha}/parts`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ sizeBytes }),
    });
    return { status: res.status, body: res.ok ? UploadPlan.parse(await res.json()) : await res.text() };
  };
  const plan = async (auth: Record<string, string>, sha: string, sizeBytes: number) => {
    const p = await planOf(auth, sha, sizeBytes);
    if (typeof p.body === "string") throw new Error(`plan refused: ${p.status} ${p.body}`);
    return p.body;
  };
  const file = async (name: string, bytes: Buffer) => {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return path;
  };

  it("uploads through presigned parts, resumes after an interruption, and publishes under the hash", async () => {
    const { credential, auth } = await agent("uploader");
    const bytes = randomBytes(11 * MiB); // 3 parts: 5 + 5 + 1 MiB
    const sha = sha256(bytes);
    const path = await file("big.bin", bytes);
    const head = await fetch(`${server.url}/api/artifacts/${sha}`, { method: "HEAD", headers: auth });
    expect(head.status).toBe(404);
    expect(head.headers.get("upload-via")).toBe("presigned");

    // The interrupted agent: it sent part 1 straight to the storage, then died.
    const first = await plan(auth, sha, bytes.length);
    expect(first.parts.map((p) => [p.partNumber, p.done])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(new URL(first.parts[0]?.url ?? "").port).toBe(new URL(moto.endpoint).port);
    const put = await fetch(first.parts[0]?.url ?? "", { method: "PUT", body: bytes.subarray(0, 5 * MiB) });
    expect(put.status).toBe(200);
    expect((await plan(auth, sha, bytes.length)).parts.map((p) => p.done)).toEqual([true, false, false]);

    const sent: number[] = [];
    expect(await uploadArtifact(server.url, credential, path, 2, (n) => sent.push(n))).toBe(sha);
    expect(sent).toEqual([2, 3]); // the resumed upload did not resend part 1
    expect(await server.app.services.artifacts.has(sha)).toBe(true);
    expect(await server.app.services.artifacts.size(sha)).toBe(bytes.length);
    const stored: Buffer[] = [];
    for await (const c of await server.app.services.artifacts.read(sha)) stored.push(c as Buffer);
    expect(sha256(Buffer.concat(stored))).toBe(sha);
    // Nothing left half-open in the bucket.
    const open = await moto.client.send(new ListMultipartUploadsCommand({ Bucket: moto.bucket, Prefix: "partial/" }));
    expect(open.Uploads ?? []).toEqual([]);
  }, 60_000);

  it("an agent downloads through a presigned redirect, bytes never pass the web process", async () => {
    const { credential, auth } = await agent("downloader");
    const bytes = Buffer.from(`dataset ${randomBytes(8).toString("hex")}\n`);
    const sha = await publishBlob(server.app.services, bytes);
    const res = await fetch(`${server.url}/api/artifacts/${sha}`, { headers: auth, redirect: "manual" });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location") ?? "");
    expect(location.origin).toBe(moto.endpoint);
    expect(location.searchParams.get("X-Amz-Signature")).toMatch(/^[a-f0-9]{64}$/);
    const path = await fetchArtifact(server.url, credential, sha, join(dir, "cache"));
    expect(await readFile(path)).toEqual(bytes);
    // Without a credential or a session there is no URL to follow.
    expect((await fetch(`${server.url}/api/artifacts/${sha}`, { redirect: "manual" })).status).toBe(401);
  });

  it("refuses bytes whose hash is not the name they were uploaded under, then accepts the right ones", async () => {
    const { credential, auth } = await agent("liar");
    const good = randomBytes(64 * 1024);
    const sha = sha256(good);
    const p = await plan(auth, sha, good.length);
    const early = await fetch(`${server.url}/api/artifacts/${sha}/complete`, { method: "POST", headers: auth });
    expect(early.status).toBe(409);
    expect(await early.text()).toMatch(/part 1 of 1 has not been uploaded/);
    const wrong = randomBytes(good.length);
    expect((await fetch(p.parts[0]?.url ?? "", { method: "PUT", body: wrong })).status).toBe(200);
    const done = await fetch(`${server.url}/api/artifacts/${sha}/complete`, { method: "POST", headers: auth });
    expect(done.status).toBe(400);
    expect(await done.text()).toContain(`hash to ${sha256(wrong)}, not ${sha}`);
    expect(await server.app.services.artifacts.has(sha)).toBe(false);
    // Positive control: the same agent uploading the right bytes gets them published.
    expect(await uploadArtifact(server.url, credential, await file("good.bin", good), 1)).toBe(sha);
    expect(await server.app.services.artifacts.has(sha)).toBe(true);
  });

  it("holds each uploader to its size, open-upload and quota limits", async () => {
    const { auth } = await agent("greedy");
    const shaOf = () => sha256(randomBytes(16));
    const tooBig = await planOf(auth, shaOf(), 17 * MiB);
    expect(tooBig.status).toBe(413);
    expect(String(tooBig.body)).toMatch(/exceeds 16777216 bytes/);
    // Positive controls: within the limits, plans open.
    expect((await planOf(auth, shaOf(), 12 * MiB)).status).toBe(200);
    const overQuota = await planOf(auth, shaOf(), 9 * MiB); // 12 + 9 > 20 MiB held in unfinished uploads
    expect(overQuota.status).toBe(429);
    expect(String(overQuota.body)).toMatch(/quota of 20971520 bytes/);
    expect((await planOf(auth, shaOf(), 1 * MiB)).status).toBe(200);
    const third = await planOf(auth, shaOf(), 1024);
    expect(third.status).toBe(429);
    expect(String(third.body)).toMatch(/too many unfinished uploads \(2\)/);
    // Another uploader's limits are its own.
    expect((await planOf((await agent("other")).auth, shaOf(), 1024)).status).toBe(200);
    // Local-disk PATCH uploads are refused with what to do instead.
    const patch = await fetch(`${server.url}/api/artifacts/${shaOf()}`, {
      method: "PATCH",
      headers: { ...auth, "upload-offset": "0" },
      body: "x",
    });
    expect(patch.status).toBe(400);
    expect(await patch.text()).toMatch(/presigned part URLs/);
  });

  it("sweeps unfinished uploads older than the expiry, and only those", async () => {
    const { auth } = await agent("abandoner");
    const later = Date.now() + 60_000;
    await server.app.services.artifacts.sweepPartials(0, later); // the earlier tests' open plans
    const p = await plan(auth, sha256(randomBytes(16)), 1024);
    expect((await fetch(p.parts[0]?.url ?? "", { method: "PUT", body: randomBytes(1024) })).status).toBe(200);
    expect(await server.app.services.artifacts.sweepPartials(3600_000)).toBe(0); // control: written just now
    expect(await server.app.services.artifacts.sweepPartials(0, later)).toBe(1);
    const open = await moto.client.send(new ListMultipartUploadsCommand({ Bucket: moto.bucket, Prefix: "partial/" }));
    expect(open.Uploads ?? []).toEqual([]);
  });
});
