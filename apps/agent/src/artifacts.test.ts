import { createServer, type Server } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { uploadArtifact } from "./artifacts";

// uploadArtifact's retries (core withRetry) against a local server that answers what we tell it:
// transient answers are retried (after Retry-After), refusals are final.

type Step = { status: number; retryAfter?: string };
let server: Server | undefined;
let dir: string | undefined;

async function serve(patchAnswers: Step[]) {
  const seen: string[] = [];
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => {
      if (req.method === "HEAD") return res.writeHead(404, { "upload-offset": "0" }).end();
      if (req.method === "PATCH") {
        const step = patchAnswers.shift() ?? { status: 204 };
        return res.writeHead(step.status, step.retryAfter ? { "retry-after": step.retryAfter } : {}).end("no");
      }
      res.writeHead(200).end("{}");
    });
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  const addr = server.address();
  if (!addr || typeof addr === "string") throw new Error("no port");
  dir = await mkdtemp(join(tmpdir(), "upload-"));
  const file = join(dir, "blob");
  await writeFile(file, "hello");
  return { url: `http://127.0.0.1:${addr.port}`, file, seen };
}

afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const patches = (seen: string[]) => seen.filter((s) => s.startsWith("PATCH")).length;

describe("artifact upload retries", () => {
  it("retries a 503 and a 429 (honouring Retry-After) and then publishes", async () => {
    const s = await serve([{ status: 503 }, { status: 429, retryAfter: "0" }]);
    const sha = await uploadArtifact(s.url, "cred", s.file);
    expect(sha).toMatch(/^[0-9a-f]{64}$/);
    expect(patches(s.seen)).toBe(3);
    expect(s.seen.at(-1)).toMatch(/^POST .*\/complete$/);
  });

  it("does not retry a refusal (403: a quota or a revoked credential)", async () => {
    const refused = await serve([{ status: 403 }]);
    await expect(uploadArtifact(refused.url, "cred", refused.file)).rejects.toThrow(
      /upload failed: 403.*not retryable/,
    );
    expect(patches(refused.seen)).toBe(1);
  });

  it("gives up after the attempts it was given", async () => {
    const s = await serve([{ status: 500 }, { status: 500 }, { status: 500 }]);
    await expect(uploadArtifact(s.url, "cred", s.file, 2)).rejects.toThrow(/upload failed: 500.*after 2 attempts/);
    expect(patches(s.seen)).toBe(2);
  });
});
