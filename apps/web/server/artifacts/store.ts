import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { DomainError } from "@agentlab/core";
import { checkSha as check, checkUploader, type ArtifactStore } from "./types";

export type { ArtifactStore } from "./types";

// Content-addressed blobs on local disk. Uploads are resumable: bytes go to a partial file that
// grows at its current size; the blob is published only when the full content hashes to its name.
// Partial files live under their uploader (`partial/<agentId>/<sha>`), so another agent can
// neither append to nor complete one, and each uploader's open partials are counted against its
// quota; a sweep removes partials nobody wrote to for a day.

export function createArtifactStore(root: string): ArtifactStore {
  const blobPath = (sha: string) => join(root, sha.slice(0, 2), sha);
  const partDir = (uploader: string) => (checkUploader(uploader), join(root, "partial", uploader));
  const partPath = (uploader: string, sha: string) => join(partDir(uploader), sha);
  const size = async (p: string) => (await stat(p).catch(() => null))?.size ?? 0;
  const usage = async (uploader: string) => {
    const names = await readdir(partDir(uploader)).catch(() => [] as string[]);
    const sizes = await Promise.all(names.map((n) => size(join(partDir(uploader), n))));
    return { open: names, bytes: sizes.reduce((a, b) => a + b, 0) };
  };
  const publish = async (part: string, sha: string) => {
    await mkdir(join(root, sha.slice(0, 2)), { recursive: true });
    await rename(part, blobPath(sha));
  };
  return {
    presigned: null,
    async has(sha) {
      check(sha);
      return (await stat(blobPath(sha)).catch(() => null)) !== null;
    },
    async partialSize(uploader, sha) {
      check(sha);
      return size(partPath(uploader, sha));
    },
    async append(uploader, sha, offset, body, limits) {
      check(sha);
      await mkdir(partDir(uploader), { recursive: true });
      const current = await size(partPath(uploader, sha));
      if (offset !== current)
        throw new DomainError("CONFLICT", `upload offset ${offset} does not match ${current} bytes received`);
      const used = await usage(uploader);
      const isNew = !used.open.includes(sha);
      if (isNew && used.open.length >= limits.maxOpen)
        throw new DomainError(
          "TOO_MANY_REQUESTS",
          `too many unfinished uploads (${used.open.length}); complete or let them expire first`,
        );
      // This partial may grow to the per-artifact limit, or to what the uploader's quota has left.
      const cap = Math.min(limits.maxBytes, current + Math.max(0, limits.quotaBytes - used.bytes));
      let written = current;
      body.on("data", (chunk: Buffer) => {
        written += chunk.length;
        if (written <= cap) return;
        const msg =
          written > limits.maxBytes
            ? `artifact exceeds ${limits.maxBytes} bytes`
            : `upload quota of ${limits.quotaBytes} bytes in unfinished uploads reached`;
        body.destroy(new DomainError("PAYLOAD_TOO_LARGE", msg));
      });
      await pipeline(body, createWriteStream(partPath(uploader, sha), { flags: "a" }));
      return written;
    },
    async complete(uploader, sha) {
      check(sha);
      const part = partPath(uploader, sha);
      if ((await stat(part).catch(() => null)) === null)
        throw new DomainError("NOT_FOUND", "no unfinished upload of this artifact by this agent");
      const hash = createHash("sha256");
      await pipeline(createReadStream(part), hash);
      const digest = hash.digest("hex");
      if (digest !== sha) {
        await rm(part, { force: true });
        throw new DomainError("BAD_REQUEST", `uploaded bytes hash to ${digest}, not ${sha}; upload discarded`);
      }
      await publish(part, sha);
      return size(blobPath(sha));
    },
    async sweepPartials(maxAgeMs, nowMs = Date.now()) {
      let removed = 0;
      const owners = await readdir(join(root, "partial")).catch(() => [] as string[]);
      for (const owner of owners) {
        const dir = join(root, "partial", owner);
        for (const name of await readdir(dir).catch(() => [] as string[])) {
          const st = await stat(join(dir, name)).catch(() => null);
          if (st && nowMs - st.mtimeMs > maxAgeMs) {
            await rm(join(dir, name), { force: true });
            removed++;
          }
        }
      }
      return removed;
    },
    size: (sha) => (check(sha), size(blobPath(sha))),
    async put(data) {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      const sha = createHash("sha256").update(bytes).digest("hex");
      if ((await stat(blobPath(sha)).catch(() => null)) === null) {
        await mkdir(partDir("server"), { recursive: true });
        await writeFile(partPath("server", sha), bytes);
        await publish(partPath("server", sha), sha);
      }
      return sha;
    },
    async read(sha) {
      check(sha);
      return createReadStream(blobPath(sha));
    },
  };
}
