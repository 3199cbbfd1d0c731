import { runPython } from "../trainer/python";
import { adapterDir, fetchBlob, trainerJob } from "./trainer-common";

// `score`: the log-probs of held-out pairs under a reference and under each policy (a DPO run's
// epoch snapshots), fetched by hash and unpacked like a generate job's adapter; the trainer checks
// every folder's tree hash before anything loads. Payload and result: ScoreJobPayload and
// ScoreJobResult in core.

export const scoreJob = (graceMs: number) =>
  trainerJob("score", graceMs, async (ctx, { payload, python }) => {
    const pairs = await fetchBlob(ctx, payload.pairsHash);
    const reference = payload.referenceAdapterArtifact
      ? await adapterDir(ctx, payload.referenceAdapterArtifact)
      : undefined;
    const policies = [];
    for (const p of payload.policies)
      policies.push({
        name: p.name,
        adapter: await adapterDir(ctx, p.adapterArtifact),
        expected_sha256: p.adapterSha256,
      });
    const result = await runPython(
      "score",
      {
        ...payload.spec,
        pairs,
        reference_adapter: reference,
        expected_reference_adapter_sha256: payload.referenceAdapterSha256 ?? null,
        policies,
      },
      python,
    );
    if (!result.score) return { reason: "infra_error", error: "trainer returned no score record" };
    return { reason: "succeeded", result: result.score };
  });
