import { z } from "zod";
import { ScoreRecord, ScoreSpec } from "../trainer/score";

// The `score` job: the trainer's score command on the agent. The pairs JSONL, the reference
// adapter and each policy's adapter travel through the artifact store by hash; the folders are the
// agent's, and the trainer refuses one that does not hash to the payload's tree hash.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

export const ScoreJobSpec = ScoreSpec.omit({
  pairs: true,
  reference_adapter: true,
  expected_reference_adapter_sha256: true,
  policies: true,
}).strict();
export type ScoreJobSpec = z.input<typeof ScoreJobSpec>;

export const ScoreJobPolicy = z.strictObject({
  name: z.string().min(1),
  /** The snapshot's archive in the artifact store, and its folder's sha256_tree. */
  adapterArtifact: Sha256,
  adapterSha256: Sha256,
});

export const ScoreJobPayload = z
  .strictObject({
    pairsHash: Sha256,
    /** The reference adapter's archive and tree hash (null: the base model is the reference). */
    referenceAdapterArtifact: Sha256.nullable().optional(),
    referenceAdapterSha256: Sha256.nullable().optional(),
    policies: z.array(ScoreJobPolicy).min(1).max(64),
    spec: ScoreJobSpec,
  })
  .refine((p) => !p.referenceAdapterArtifact === !p.referenceAdapterSha256, {
    message: "a reference adapter needs both its archive and its hash",
    path: ["referenceAdapterSha256"],
  });
export type ScoreJobPayload = z.input<typeof ScoreJobPayload>;

export const ScoreJobResult = ScoreRecord.strict();
export type ScoreJobResult = z.infer<typeof ScoreJobResult>;
