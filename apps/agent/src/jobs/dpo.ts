import { join } from "node:path";
import { runPython } from "../trainer/python";
import { adapterDir, epochUploads, fetchBlob, trainerJob } from "./trainer-common";

// `dpo`: preference training, or scoring (`spec.score_only`), on pairs fetched by hash,
// optionally from an SFT snapshot fetched and unpacked like a generate job's adapter (its tree hash
// is checked by the trainer before anything loads). Every epoch's adapter is uploaded as soon as it
// exists, like train's. Payload and result: DpoJobPayload and DpoJobResult in core.

export const dpoJob = (graceMs: number) =>
  trainerJob("dpo", graceMs, async (ctx, { payload, python }) => {
    const { spec, pairsHash, startAdapterArtifact, startAdapterSha256 } = payload;
    const uploads = epochUploads(ctx, () => ({ trainer: "dpo", beta: spec.beta }));
    try {
      const pairs = await fetchBlob(ctx, pairsHash);
      const start = startAdapterArtifact ? await adapterDir(ctx, startAdapterArtifact) : undefined;
      const result = await runPython(
        "dpo",
        {
          ...spec,
          pairs,
          output_dir: join(ctx.workDir, "out"),
          start_adapter: start,
          expected_start_adapter_sha256: startAdapterSha256 ?? null,
        },
        {
          ...python,
          onEvent: (ev) => {
            if (ev.event === "progress") ctx.progress({ ...ev });
            if (ev.event === "artifact") uploads.add(ev);
          },
        },
      );
      await uploads.done();
      const record = result.dpo;
      if (!record) return { reason: "infra_error", error: "trainer returned no dpo run record" };
      const snapshots = record.snapshots.map((s) => ({ ...s, artifact: uploads.artifacts.get(s.epoch) ?? null }));
      return { reason: "succeeded", result: { ...record, snapshots } };
    } finally {
      await uploads.settle();
    }
  });
