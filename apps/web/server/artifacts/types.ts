import type { Readable } from "node:stream";
import { DomainError, type UploadPlan } from "@agentlab/core";

/** Per-uploader limits on unfinished uploads. */
export type UploadLimits = { maxBytes: number; quotaBytes: number; maxOpen: number };

/**
 * Content-addressed blobs: a blob is published under its sha256 only after its bytes were hashed
 * and matched. Implementations: local disk (store.ts, the default) and S3-compatible object
 * storage (s3-store.ts), chosen in env.ts (AGENTLAB_ARTIFACT_STORE).
 */
export type ArtifactStore = {
  has(sha256: string): Promise<boolean>;
  size(sha256: string): Promise<number>;
  read(sha256: string): Promise<Readable>;
  /** Stores bytes produced by the server itself (e.g. a dataset for a train job); returns their sha256. */
  put(data: Buffer | string): Promise<string>;
  /** Bytes received so far of `uploader`'s unfinished upload (the local disk protocol). */
  partialSize(uploader: string, sha256: string): Promise<number>;
  append(uploader: string, sha256: string, offset: number, body: Readable, limits: UploadLimits): Promise<number>;
  /** Verifies the hash of `uploader`'s finished upload and publishes it; returns its size. */
  complete(uploader: string, sha256: string): Promise<number>;
  /** Removes partial uploads last written more than `maxAgeMs` ago; returns how many. */
  sweepPartials(maxAgeMs: number, nowMs?: number): Promise<number>;
  /** Set when agents move bytes directly to and from the storage through presigned URLs. */
  presigned: PresignedTransfers | null;
};

export type PresignedTransfers = {
  downloadUrl(sha256: string): Promise<string>;
  /** Opens (or resumes) `uploader`'s multipart upload of `sha256` within its limits. */
  plan(uploader: string, sha256: string, sizeBytes: number, limits: UploadLimits): Promise<UploadPlan>;
};

const SHA_RE = /^[a-f0-9]{64}$/;
export const checkSha = (sha: string) => {
  if (!SHA_RE.test(sha)) throw new DomainError("BAD_REQUEST", "artifact id must be a lowercase sha256 hex digest");
};
// Uploader ids become path segments: agent UUIDs, or the server's own "server".
const UPLOADER_RE = /^[a-z0-9-]{1,64}$/;
export const checkUploader = (u: string) => {
  if (!UPLOADER_RE.test(u)) throw new Error(`bad uploader id ${u}`);
};
