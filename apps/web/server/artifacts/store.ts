import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DomainError } from "@agentlab/core";
import { checkSha as check, checkUploader, type ArtifactStore } from "./types";

export type { ArtifactStore } from "./types";

// Content-addressed blobs on local disk. Uploads are resumable: bytes go to a partial file that
// grows at its current size; the blob is published only when the full content hashes to its name.
// Partial files live under their uploader (`partial/<agentId>/<sha>`), so another agent can
// neither append to nor complete one, and each uploader's open partials are counted against its
// quota; a sweep removes partials nobody wrote to for a day.

/**
 * Appends `body` to the file at `path` (now `start` bytes) while the total stays within `cap`, and
 * throws `refusal` if the body went past it. Past the cap nothing more is written, but the rest of
 * the body is read and dropped (up to `drainMax` bytes), so that the client gets the refusal as an
 * answer: destroying the request mid-send resets the connection, which a client cannot tell from
 * a network fault.
 */
async function appendCapped(
  body: Readable,
  path: string,
  start: number,
  cap: number,
  drainMax: number,
  refusal: DomainError,
) {
  let written = start;
  let over = false;
  let dropped = 0;
  const capper = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (!over && written + chunk.length <= cap) {
        written += chunk.length;
        return cb(null, chunk);
      }
      over = true;
      dropped += chunk.length;
      cb(dropped > drainMax ? refusal : null);
    },
  });
  await pipeline(body, capper, createWriteStream(path, { flags: "a" }));
  if (over) throw refusal;
  return written;
}

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
      const quotaFull = `upload quota of ${limits.quotaBytes} bytes in unfinished uploads reached`;
      // Refused before a byte is read; the server reads and drops the body itself after answering.
      if (cap <= current && current < limits.maxBytes) throw new DomainError("TOO_MANY_REQUESTS", quotaFull);
      const refusal =
        cap === limits.maxBytes
          ? new DomainError("PAYLOAD_TOO_LARGE", `artifact exceeds ${limits.maxBytes} bytes`)
          : new DomainError("TOO_MANY_REQUESTS", quotaFull);
      const written = await appendCapped(body, partPath(uploader, sha), current, cap, limits.maxBytes, refusal);
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
