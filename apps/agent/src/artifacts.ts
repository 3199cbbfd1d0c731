import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  parseRetryAfter,
  UPLOAD_VIA_HEADER,
  UPLOAD_VIA_PRESIGNED,
  UploadPlan,
  withRetry,
  type RetryDecision,
  type RetryPolicy,
} from "@agentlab/core";

/**
 * Uploads a file to the server's content-addressed store, resuming from the offset the server
 * already holds (HEAD), then asks it to verify the hash and publish. Returns the sha256. When the
 * server keeps artifacts in object storage (HEAD says `upload-via: presigned`), the bytes go to
 * the presigned part URLs of its plan instead, skipping the parts it already holds.
 * `onPart` hears each part sent (progress; the tests count resent parts with it).
 */
export async function uploadArtifact(
  serverUrl: string,
  credential: string,
  path: string,
  attempts = 5,
  onPart?: (partNumber: number) => void,
): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path), hash);
  const sha = hash.digest("hex");
  const size = (await stat(path)).size;
  const url = new URL(`/api/artifacts/${sha}`, serverUrl).toString();
  const headers = { authorization: `Bearer ${credential}` };
  const once = async (): Promise<string> => {
    const head = await fetch(url, { method: "HEAD", headers });
    if (head.status !== 200 && head.headers.get(UPLOAD_VIA_HEADER) === UPLOAD_VIA_PRESIGNED)
      await uploadParts(url, headers, path, size, onPart);
    else if (head.status !== 200) {
      const offset = Number(head.headers.get("upload-offset") ?? "0");
      if (offset < size) {
        const body = Readable.toWeb(createReadStream(path, { start: offset })) as ReadableStream;
        const res = await fetch(url, {
          method: "PATCH",
          headers: { ...headers, "upload-offset": String(offset), "content-type": "application/octet-stream" },
          body,
          duplex: "half",
        } as RequestInit);
        if (!res.ok) throw await HttpFailure.of("upload", res);
      }
    }
    const done = await fetch(`${url}/complete`, { method: "POST", headers });
    if (!done.ok) throw await HttpFailure.of("publish", done);
    return sha;
  };
  // Each try resumes from the offset the server holds, so a retry never resends what arrived.
  const out = await withRetry(once, { policy: { ...UPLOAD_RETRY, maxAttempts: attempts }, classify: classifyUpload });
  return out.value;
}

/** Sends the parts the server's plan does not hold yet, each to its presigned URL. */
async function uploadParts(
  url: string,
  headers: Record<string, string>,
  path: string,
  size: number,
  onPart?: (partNumber: number) => void,
) {
  const res = await fetch(`${url}/parts`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ sizeBytes: size }),
  });
  if (!res.ok) throw await HttpFailure.of("upload plan", res);
  const plan = UploadPlan.parse(await res.json());
  for (const part of plan.parts) {
    if (part.done) continue;
    const start = (part.partNumber - 1) * plan.partSize;
    const bytes = await readRange(path, start, Math.min(plan.partSize, size - start));
    // No credential here: the URL carries its own signature, and the storage refuses a second one.
    const put = await fetch(part.url, { method: "PUT", body: new Uint8Array(bytes) });
    if (!put.ok) throw await HttpFailure.of(`part ${part.partNumber} upload`, put);
    onPart?.(part.partNumber);
  }
}

async function readRange(path: string, start: number, length: number): Promise<Buffer> {
  if (length <= 0) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const chunk of createReadStream(path, { start, end: start + length - 1 })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const UPLOAD_RETRY: RetryPolicy = {
  baseMs: 500,
  capMs: 8000,
  maxAttempts: 5,
  maxRateLimited: 20,
  retryAfterCapMs: 60_000,
};

/** A non-2xx answer of the artifact endpoints, with what the retry needs from it. */
class HttpFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfter: string | null,
  ) {
    super(message);
  }
  static async of(what: string, res: Response): Promise<HttpFailure> {
    return new HttpFailure(
      `${what} failed: ${res.status} ${await res.text()}`,
      res.status,
      res.headers.get("retry-after"),
    );
  }
}

/**
 * Network errors, 408, 429 and 5xx are retried (429/503 after their Retry-After); other refusals
 * (a quota, a hash mismatch, a revoked credential) would be refused again and are final.
 */
function classifyUpload(err: unknown): RetryDecision {
  if (!(err instanceof HttpFailure)) return { retry: true, rateLimited: false, retryAfterMs: null };
  if (err.status !== 408 && err.status !== 429 && err.status < 500) return { retry: false };
  return { retry: true, rateLimited: err.status === 429, retryAfterMs: parseRetryAfter(err.retryAfter, Date.now()) };
}

/**
 * Fetches a content-addressed blob into `dir/<sha256>` unless it is already there, verifying the
 * hash before the file appears (written to a temporary name, then renamed).
 */
export async function fetchArtifact(
  serverUrl: string,
  credential: string,
  sha256: string,
  dir: string,
): Promise<string> {
  const dest = join(dir, sha256);
  if (
    await stat(dest).then(
      () => true,
      () => false,
    )
  )
    return dest;
  await mkdir(dir, { recursive: true });
  const first = await fetch(new URL(`/api/artifacts/${sha256}`, serverUrl), {
    headers: { authorization: `Bearer ${credential}` },
    redirect: "manual",
  });
  // Object storage: the server answers a presigned URL, fetched without our credential.
  const location = first.status === 302 ? first.headers.get("location") : null;
  const res = location ? await fetch(location) : first;
  if (!res.ok || !res.body) throw new Error(`artifact ${sha256} could not be fetched: ${res.status}`);
  const tmp = `${dest}.${process.pid}.part`;
  const hash = createHash("sha256");
  const body = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream);
  body.on("data", (chunk: Buffer) => hash.update(chunk));
  await pipeline(body, createWriteStream(tmp));
  const got = hash.digest("hex");
  if (got !== sha256) {
    await rm(tmp, { force: true });
    throw new Error(`artifact ${sha256} arrived with hash ${got}`);
  }
  await rename(tmp, dest);
  return dest;
}
