import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  NotFound,
  type MultipartUpload,
  type Part,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { DomainError, type UploadPlan } from "@agentlab/core";
import { checkSha, checkUploader, type ArtifactStore, type UploadLimits } from "./types";

// Content-addressed blobs in an S3-compatible bucket. Agents move bytes through presigned URLs:
// a multipart upload per (uploader, sha) under `partial/<uploader>/<sha>/<size>` (the declared
// size rides in the key, so the open uploads and their bytes are known from one listing, with no
// extra state), then the server completes it, hashes the assembled object and only on a match
// copies it to `blobs/<sha>`. Hashing reads the bytes once on the server: S3's own multipart
// checksums are per part, not of the whole object, so they cannot stand in for the content address.

type S3StoreOptions = {
  /** Talks to the storage from the server. */
  client: S3Client;
  /** Signs the URLs agents use (its endpoint must be reachable by them); defaults to `client`. */
  presignClient?: S3Client;
  bucket: string;
  /** Multipart part size (S3: at least 5 MiB except the last part). */
  partBytes: number;
  urlTtlS: number;
};

const MAX_PARTS = 10_000;
const blobKey = (sha: string) => `blobs/${sha}`;
const uploaderPrefix = (uploader: string) => (checkUploader(uploader), `partial/${uploader}/`);

const isNotFound = (err: unknown) =>
  err instanceof NotFound ||
  (err instanceof Error && (err.name === "NotFound" || err.name === "NoSuchKey" || err.name === "NoSuchUpload"));

export function createS3ArtifactStore(opts: S3StoreOptions): ArtifactStore {
  const { client, bucket } = opts;
  const presignClient = opts.presignClient ?? client;

  const head = async (key: string) =>
    client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).catch((err: unknown) => {
      if (isNotFound(err)) return null;
      throw err;
    });

  const listUploads = async (prefix: string): Promise<MultipartUpload[]> => {
    const out: MultipartUpload[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page = await client.send(
        new ListMultipartUploadsCommand({
          Bucket: bucket,
          Prefix: prefix,
          KeyMarker: keyMarker,
          UploadIdMarker: uploadIdMarker,
        }),
      );
      out.push(...(page.Uploads ?? []));
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
    return out;
  };

  const listParts = async (key: string, uploadId: string): Promise<Part[]> => {
    const out: Part[] = [];
    let marker: string | undefined;
    do {
      const page = await client.send(
        new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }),
      );
      out.push(...(page.Parts ?? []));
      marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
    } while (marker);
    return out;
  };

  /** The declared size in a partial key `partial/<uploader>/<sha>/<size>`. */
  const declaredSize = (key: string) => Number(key.split("/")[3] ?? "0");
  const openUploadOf = async (uploader: string, sha: string) =>
    (await listUploads(`${uploaderPrefix(uploader)}${sha}/`)).find((u) => u.Key && u.UploadId);
  const abort = (key: string, uploadId: string) =>
    client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));

  const layout = (sizeBytes: number) => {
    // Large files get larger parts so they fit in S3's 10,000-part limit.
    const partSize = Math.max(opts.partBytes, Math.ceil(sizeBytes / MAX_PARTS));
    const count = Math.max(1, Math.ceil(sizeBytes / partSize));
    const expected = (n: number) => Math.min(partSize, sizeBytes - (n - 1) * partSize);
    return { partSize, count, expected };
  };

  const hashObject = async (key: string) => {
    const obj = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if (!(obj.Body instanceof Readable)) throw new Error(`object ${key} has no readable body`);
    const hash = createHash("sha256");
    await pipeline(obj.Body, hash);
    return hash.digest("hex");
  };

  const unsupported = () =>
    new DomainError(
      "BAD_REQUEST",
      "this server stores artifacts in object storage: upload through presigned part URLs (POST /api/artifacts/<sha>/parts)",
    );

  return {
    async has(sha) {
      checkSha(sha);
      return (await head(blobKey(sha))) !== null;
    },
    async size(sha) {
      checkSha(sha);
      const h = await head(blobKey(sha));
      if (!h) throw new DomainError("NOT_FOUND", "no such artifact");
      return h.ContentLength ?? 0;
    },
    async read(sha) {
      checkSha(sha);
      const obj = await client.send(new GetObjectCommand({ Bucket: bucket, Key: blobKey(sha) }));
      if (!(obj.Body instanceof Readable)) throw new Error(`artifact ${sha} has no readable body`);
      return obj.Body;
    },
    async put(data) {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      const sha = createHash("sha256").update(bytes).digest("hex");
      // The server's own bytes are hashed here, so they go straight to their content address.
      if (!(await head(blobKey(sha))))
        await new Upload({
          client,
          params: { Bucket: bucket, Key: blobKey(sha), Body: bytes },
          partSize: opts.partBytes,
        }).done();
      return sha;
    },
    partialSize: async () => 0,
    append: async () => {
      throw unsupported();
    },
    async complete(uploader, sha) {
      checkSha(sha);
      const open = await openUploadOf(uploader, sha);
      if (!open?.Key || !open.UploadId)
        throw new DomainError("NOT_FOUND", "no unfinished upload of this artifact by this agent");
      const { Key: key, UploadId: uploadId } = open;
      const size = declaredSize(key);
      const { count, expected } = layout(size);
      const parts = new Map((await listParts(key, uploadId)).map((p) => [p.PartNumber ?? 0, p]));
      for (let n = 1; n <= count; n++) {
        const got = parts.get(n)?.Size;
        if (got !== expected(n))
          throw new DomainError(
            "CONFLICT",
            got === undefined
              ? `part ${n} of ${count} has not been uploaded`
              : `part ${n} has ${got} bytes, expected ${expected(n)}`,
          );
      }
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: {
            Parts: Array.from({ length: count }, (_, i) => ({ PartNumber: i + 1, ETag: parts.get(i + 1)?.ETag })),
          },
        }),
      );
      try {
        const digest = await hashObject(key);
        if (digest !== sha)
          throw new DomainError("BAD_REQUEST", `uploaded bytes hash to ${digest}, not ${sha}; upload discarded`);
        // CopyObject takes objects up to 5 GB, above AGENTLAB_MAX_UPLOAD_BYTES's default of 512 MiB.
        await client.send(new CopyObjectCommand({ Bucket: bucket, Key: blobKey(sha), CopySource: `${bucket}/${key}` }));
      } finally {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      }
      return size;
    },
    async sweepPartials(maxAgeMs, nowMs = Date.now()) {
      let removed = 0;
      for (const u of await listUploads("partial/")) {
        if (!u.Key || !u.UploadId) continue;
        // Last written = the newest part, else the start (like the local store's mtime). moto
        // reports a fixed Initiated date, so the parts' times are what its tests can see.
        const times = (await listParts(u.Key, u.UploadId)).map((p) => p.LastModified?.getTime() ?? 0);
        const lastWrite = Math.max(u.Initiated?.getTime() ?? 0, ...times);
        if (nowMs - lastWrite > maxAgeMs) {
          await abort(u.Key, u.UploadId);
          removed++;
        }
      }
      // Assembled partials a crash left between completion and publication.
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: "partial/", ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) {
          if (o.Key && o.LastModified && nowMs - o.LastModified.getTime() > maxAgeMs) {
            await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
            removed++;
          }
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return removed;
    },
    presigned: {
      downloadUrl: (sha) => (
        checkSha(sha),
        getSignedUrl(presignClient, new GetObjectCommand({ Bucket: bucket, Key: blobKey(sha) }), {
          expiresIn: opts.urlTtlS,
        })
      ),
      plan: (uploader, sha, sizeBytes, limits) => plan(uploader, sha, sizeBytes, limits),
    },
  };

  async function plan(uploader: string, sha: string, sizeBytes: number, limits: UploadLimits): Promise<UploadPlan> {
    checkSha(sha);
    if (sizeBytes > limits.maxBytes)
      throw new DomainError("PAYLOAD_TOO_LARGE", `artifact exceeds ${limits.maxBytes} bytes`);
    const mine = await listUploads(uploaderPrefix(uploader));
    let open = mine.find((u) => u.Key?.startsWith(`${uploaderPrefix(uploader)}${sha}/`));
    if (open?.Key && open.UploadId && declaredSize(open.Key) !== sizeBytes) {
      // Same content, another size: the earlier declaration was wrong; start over.
      await abort(open.Key, open.UploadId);
      open = undefined;
    }
    if (!open) {
      const others = mine.filter((u) => !u.Key?.startsWith(`${uploaderPrefix(uploader)}${sha}/`));
      if (others.length >= limits.maxOpen)
        throw new DomainError(
          "TOO_MANY_REQUESTS",
          `too many unfinished uploads (${others.length}); complete or let them expire first`,
        );
      const held = others.reduce((sum, u) => sum + declaredSize(u.Key ?? ""), 0);
      // 429 like the local store's: the agent may retry once its other uploads finish or expire.
      if (held + sizeBytes > limits.quotaBytes)
        throw new DomainError(
          "TOO_MANY_REQUESTS",
          `upload quota of ${limits.quotaBytes} bytes in unfinished uploads reached (${held} held)`,
        );
      const key = `${uploaderPrefix(uploader)}${sha}/${sizeBytes}`;
      const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      open = { Key: key, UploadId: created.UploadId };
    }
    const key = open.Key ?? "";
    const uploadId = open.UploadId ?? "";
    const { partSize, count, expected } = layout(sizeBytes);
    const received = new Map((await listParts(key, uploadId)).map((p) => [p.PartNumber ?? 0, p.Size]));
    const parts = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const partNumber = i + 1;
        const url = await getSignedUrl(
          presignClient,
          new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber }),
          { expiresIn: opts.urlTtlS },
        );
        return { partNumber, url, done: received.get(partNumber) === expected(partNumber) };
      }),
    );
    return { sizeBytes, partSize, parts };
  }
}
