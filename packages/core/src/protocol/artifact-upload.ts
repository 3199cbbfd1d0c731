import { z } from "zod";

// The artifact endpoints' answers an agent acts on when the server stores blobs in S3-compatible
// object storage: bytes go straight to presigned URLs, never through the web process.

/** `HEAD /api/artifacts/<sha>` names this header when uploads go through presigned part URLs. */
export const UPLOAD_VIA_HEADER = "upload-via";
export const UPLOAD_VIA_PRESIGNED = "presigned";

/** `POST /api/artifacts/<sha>/parts` body: the size the uploader will send (checked at completion). */
export const UploadPlanRequest = z.object({ sizeBytes: z.number().int().nonnegative() });
export type UploadPlanRequest = z.infer<typeof UploadPlanRequest>;

/**
 * Every part of a multipart upload with its presigned PUT URL; `done` parts were already received
 * with their full size (a resumed upload sends only the others). Part n covers bytes
 * [(n-1)·partSize, min(n·partSize, sizeBytes)).
 */
export const UploadPlan = z.object({
  sizeBytes: z.number().int().nonnegative(),
  partSize: z.number().int().positive(),
  parts: z.array(z.object({ partNumber: z.number().int().positive(), url: z.string().url(), done: z.boolean() })),
});
export type UploadPlan = z.infer<typeof UploadPlan>;
