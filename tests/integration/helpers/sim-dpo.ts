import type { Readable } from "node:stream";
import {
  DpoJobPayload,
  DpoPairLine,
  ScoreJobPayload,
  sha256Hex,
  type DpoJobResult,
  type ScoreJobResult,
} from "@agentlab/core";
import { modelOf, namedAdapterSha, simEnvironment } from "./sim-trainer";

// The simulated agent's `dpo` job for the experiments harness: it reads the pairs JSONL
// the server published (by hash, from the artifact store, like a real agent), answers a score job
// with a margin per pair from a fixed rule, and a training job with one named snapshot per epoch
// (`dpo-s<seed>r<round>e<epoch>`, the round read off the start adapter). Every payload it got is kept.

export type SimDpoCall = { payload: DpoJobPayload; pairIds: string[]; start: string };

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString("utf8");
}

/** The round a DPO run from `start` trains: 1 from the base or an SFT epoch, k + 1 from a round-k DPO epoch. */
const roundAfter = (start: string) => {
  const m = /^dpo-s\d+r(\d+)e\d+$/.exec(start);
  return m ? Number(m[1]) + 1 : 1;
};

export function simDpo(opts: {
  read(sha: string): Promise<Readable>;
  margin(pairId: string): number;
  calls: SimDpoCall[];
}) {
  return async (raw: Record<string, unknown>): Promise<DpoJobResult> => {
    const payload = DpoJobPayload.parse(raw);
    const lines = (await text(await opts.read(payload.pairsHash)))
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => DpoPairLine.parse(JSON.parse(l)));
    const start = payload.startAdapterSha256 ? modelOf(payload.startAdapterSha256) : "base";
    opts.calls.push({ payload, pairIds: lines.map((l) => l.pair_id), start });
    const seed = payload.spec.seed ?? 0;
    const scoreOnly = payload.spec.score_only ?? false;
    const epochs = scoreOnly ? 0 : (payload.spec.epochs ?? 1);
    const round = roundAfter(start);
    const t = "2026-01-01T00:00:00Z";
    return {
      status: "succeeded",
      mode: scoreOnly ? "score" : "train",
      method: "lora-fp32",
      device: "cpu",
      config: {},
      pairs_sha256: payload.pairsHash,
      chat_template_sha256: sha256Hex("chatml"),
      model: { id: "/models/tiny", path: "/models/tiny", weights_sha256: sha256Hex("tiny weights") },
      start_adapter_sha256: payload.startAdapterSha256 ?? null,
      reference: payload.startAdapterSha256 ? "start_adapter" : "base (adapter disabled)",
      seed,
      eot_token: "<|im_end|>",
      beta: payload.spec.beta ?? 0.1,
      sft_weight: payload.spec.sft_weight ?? 0,
      pair_count: lines.length,
      pairs: lines.map((l) => ({
        pair_id: l.pair_id,
        ref_chosen_logp: opts.margin(l.pair_id) - 10,
        ref_rejected_logp: -10,
        margin: opts.margin(l.pair_id),
        chosen_tokens: 3,
        rejected_tokens: 3,
        weight: l.weight ?? 1,
      })),
      trainable_parameters: 10,
      total_steps: epochs,
      steps: epochs,
      epochs_completed: epochs,
      snapshots: Array.from({ length: epochs }, (_, i) => {
        const name = `dpo-s${seed}r${round}e${i + 1}`;
        return {
          epoch: i + 1,
          path: `/adapters/${name}`,
          sha256: namedAdapterSha(name),
          files: ["adapter_model.safetensors"],
          train_loss: 0.6 / (i + 1),
          eval_loss: null,
          step: i + 1,
          reward_margin: 0.1 * (i + 1),
          preference_accuracy: 0.5 + 0.1 * (i + 1),
          artifact: sha256Hex(`archive ${name}`),
        };
      }),
      started_at: t,
      finished_at: t,
      train_time_s: 1,
      wall_time_s: 1,
      supervised_tokens: 6 * lines.length,
      supervised_tokens_per_s: 6,
      peak_memory_mb: 1,
      environment: simEnvironment,
      pip_freeze: [],
    };
  };
}

export type SimScoreCall = { payload: ScoreJobPayload; pairIds: string[] };

/**
 * The simulated agent's `score` job: reads the held-out pairs by hash and reports, per policy, the
 * Δ log-probs a rule gives for its epoch (so a test can make the chosen answers fall on held-out pairs).
 */
export function simScore(opts: {
  read(sha: string): Promise<Readable>;
  delta(epoch: number): { chosen: number; rejected: number };
  calls: SimScoreCall[];
}) {
  return async (raw: Record<string, unknown>): Promise<ScoreJobResult> => {
    const payload = ScoreJobPayload.parse(raw);
    const lines = (await text(await opts.read(payload.pairsHash)))
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => DpoPairLine.parse(JSON.parse(l)));
    opts.calls.push({ payload, pairIds: lines.map((l) => l.pair_id) });
    return {
      status: "succeeded",
      method: "lora-fp32",
      device: "cpu",
      pairs_sha256: payload.pairsHash,
      pair_count: lines.length,
      reference: payload.referenceAdapterSha256 ? "reference_adapter" : "base",
      reference_adapter_sha256: payload.referenceAdapterSha256 ?? null,
      ref_chosen_logp: -10,
      ref_rejected_logp: -12,
      policies: payload.policies.map((p) => {
        const d = opts.delta(Number(p.name.replace(/^epoch-/, "")));
        return {
          name: p.name,
          adapter_sha256: p.adapterSha256,
          chosen_logp_delta: d.chosen,
          rejected_logp_delta: d.rejected,
          margin_gain_rate: d.chosen > d.rejected ? 1 : 0,
          logp_warning:
            d.chosen < 0
              ? `the chosen answers' log-prob fell by ${-d.chosen} nats per answer on held-out dev pairs`
              : null,
        };
      }),
      wall_time_s: 0.1,
    };
  };
}
