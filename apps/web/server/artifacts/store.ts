import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Readable } from "node:stream";
import { DomainError } from "@agentlab/core";

// Content-addressed blobs on local disk. Uploads are resumable: bytes go to a partial file that
// grows at its current size; the blob is published only when the full content hashes to its name.
export type ArtifactStore = {
  has(sha256: string): Promise<boolean>;
  partialSize(sha256: string): Promise<number>;
  append(sha256: string, offset: number, body: Readable, maxBytes: number): Promise<number>;
  complete(sha256: string): Promise<number>;
  read(sha256: string): Readable;
  size(sha256: string): Promise<number>;
  path(sha256: string): string;
  /** Stores bytes produced by the server itself (e.g. a dataset for a train job); returns their sha256. */
  put(data: Buffer | string): Promise<string>;
};

const SHA_RE = /^[a-f0-9]{64}$/;
const check = (sha: string) => {
  if (!SHA_RE.test(sha)) throw new DomainError("BAD_REQUEST", "artifact id must be a lowercase sha256 hex digest");
};

export function createArtifactStore(root: string): ArtifactStore {
  const blobPath = (sha: string) => join(root, sha.slice(0, 2), sha);
  const partPath = (sha: string) => join(root, "partial", sha);
  const size = async (p: string) => (await stat(p).catch(() => null))?.size ?? 0;
  return {
    path: (sha) => (check(sha), blobPath(sha)),
    async has(sha) {
      check(sha);
      return (await stat(blobPath(sha)).catch(() => null)) !== null;
    },
    async partialSize(sha) {
      check(sha);
      return size(partPath(sha));
    },
    async append(sha, offset, body, maxBytes) {
      check(sha);
      await mkdir(join(root, "partial"), { recursive: true });
      const current = await size(partPath(sha));
      if (offset !== current) throw new DomainError("CONFLICT", `upload offset ${offset} does not match ${current} bytes received`);
      let written = current;
      body.on("data", (chunk: Buffer) => {
        written += chunk.length;
        if (written > maxBytes) body.destroy(new DomainError("PAYLOAD_TOO_LARGE", `artifact exceeds ${maxBytes} bytes`));
      });
      await pipeline(body, createWriteStream(partPath(sha), { flags: "a" }));
      return written;
    },
    async complete(sha) {
      check(sha);
      const part = partPath(sha);
      const hash = createHash("sha256");
      await pipeline(createReadStream(part), hash);
      const digest = hash.digest("hex");
      if (digest !== sha) {
        await rm(part, { force: true });
        throw new DomainError("BAD_REQUEST", `uploaded bytes hash to ${digest}, not ${sha}; upload discarded`);
      }
      await mkdir(join(root, sha.slice(0, 2)), { recursive: true });
      await rename(part, blobPath(sha));
      return size(blobPath(sha));
    },
    size: (sha) => (check(sha), size(blobPath(sha))),
    async put(data) {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      const sha = createHash("sha256").update(bytes).digest("hex");
      if ((await stat(blobPath(sha)).catch(() => null)) === null) {
        await mkdir(join(root, "partial"), { recursive: true });
        await writeFile(partPath(sha), bytes);
        await mkdir(join(root, sha.slice(0, 2)), { recursive: true });
        await rename(partPath(sha), blobPath(sha));
      }
      return sha;
    },
    read(sha) {
      check(sha);
      return createReadStream(blobPath(sha));
    },
  };
}
