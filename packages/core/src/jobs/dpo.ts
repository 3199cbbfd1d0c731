import { z } from "zod";
import { DpoRecord, DpoSnapshot, DpoSpec } from "../trainer/dpo";

// The `dpo` job: preference training or scoring on the agent. The pairs JSONL and the
// starting adapter travel through the artifact store by hash, like a train job's dataset; the
// paths are the agent's. One source for the start adapter's hash: the payload's.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

export const DpoJobSpec = DpoSpec.omit({
  pairs: true,
  output_dir: true,
  start_adapter: true,
  expected_start_adapter_sha256: true,
}).strict();
export type DpoJobSpec = z.input<typeof DpoJobSpec>;

export const DpoJobPayload = z
  .strictObject({
    /** The pairs JSONL (DpoPairLine per line) in the artifact store. */
    pairsHash: Sha256,
    /** The SFT snapshot's archive to start from (null: a fresh LoRA on the base). */
    startAdapterArtifact: Sha256.nullable().optional(),
    /** That snapshot's sha256_tree; the trainer refuses a folder that does not hash to it. */
    startAdapterSha256: Sha256.nullable().optional(),
    spec: DpoJobSpec,
  })
  .refine((p) => !p.startAdapterArtifact === !p.startAdapterSha256, {
    message: "a start adapter needs both its archive (startAdapterArtifact) and its hash (startAdapterSha256)",
    path: ["startAdapterSha256"],
  });
export type DpoJobPayload = z.input<typeof DpoJobPayload>;

/** The dpo run record, each epoch's snapshot with the archive the agent uploaded. */
export const DpoJobResult = DpoRecord.extend({
  snapshots: z.array(DpoSnapshot.extend({ artifact: Sha256.nullable() })),
}).strict();
export type DpoJobResult = z.infer<typeof DpoJobResult>;
