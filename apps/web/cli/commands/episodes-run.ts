import { SCRIPTED_POLICIES, type EpisodePolicyRequest, type ScriptedPolicyName } from "@agentlab/core";
import { num, str, writeLine, UsageError, type Command } from "../command";

// `agentlab episodes run`: enqueue episodes of one policy on a frozen split's train (or dev) tasks,
// a teacher through its provider (the key stays on the server), a local model run by the agent
// (its base model, optionally an adapter by hash) or a scripted control.

const optNum = (v: string | boolean | undefined, name: string): number | undefined =>
  v === undefined ? undefined : num(v, name);

const isScripted = (v: string): v is ScriptedPolicyName => (SCRIPTED_POLICIES as readonly string[]).includes(v);

const optStr = (v: string | boolean | undefined): string | undefined => (typeof v === "string" ? v : undefined);

/** A local model on the agent: its base model, optionally an adapter (archive and snapshot hash), its decoding. */
function localPolicy(model: string, values: Record<string, string | boolean | undefined>): EpisodePolicyRequest {
  const template = optStr(values["chat-template"]) ?? "model";
  if (template !== "model" && template !== "minimal_qwen")
    throw new UsageError("--chat-template is model or minimal_qwen");
  const adapterArtifact = optStr(values["adapter-artifact"]);
  const adapterSha256 = optStr(values["adapter-sha256"]);
  return {
    kind: "local",
    baseModel: model,
    ...(adapterArtifact ? { adapterArtifact } : {}),
    ...(adapterSha256 ? { adapterSha256 } : {}),
    chatTemplate: template,
    decoding: {
      doSample: values.greedy !== true,
      temperature: num(values.temperature, "--temperature", 0.8),
      topP: num(values["top-p"], "--top-p", 1),
      maxNewTokens: num(values["max-tokens"], "--max-tokens", 512),
    },
  };
}

function policyOf(values: Record<string, string | boolean | undefined>): EpisodePolicyRequest {
  const teacher = typeof values.teacher === "string" ? values.teacher : undefined;
  const scripted = typeof values.scripted === "string" ? values.scripted : undefined;
  const local = optStr(values.local);
  if ([teacher, scripted, local].filter((v) => v !== undefined).length !== 1)
    throw new UsageError("name one policy: --teacher PROVIDER_ID, --scripted NAME or --local MODEL");
  if (local !== undefined) return localPolicy(local, values);
  if (scripted !== undefined) {
    if (!isScripted(scripted)) throw new UsageError(`--scripted is one of ${SCRIPTED_POLICIES.join(", ")}`);
    return { kind: "scripted", name: scripted };
  }
  return {
    kind: "teacher",
    providerId: str(teacher, "--teacher"),
    ...(typeof values.model === "string" ? { model: values.model } : {}),
    params: {
      temperature: num(values.temperature, "--temperature", 0.8),
      top_p: num(values["top-p"], "--top-p", 1),
      max_tokens: num(values["max-tokens"], "--max-tokens", 2048),
    },
    maxRetries: num(values["max-retries"], "--max-retries", 5),
    budgetUsd: optNum(values.budget, "--budget"),
  };
}

export const runEpisodes: Command = {
  name: "episodes run",
  usage:
    "agentlab episodes run --split ID (--teacher PROVIDER_ID [--model M] [--temperature 0.8] [--top-p 1] [--max-tokens 2048] [--max-retries 5] [--budget USD] | --local MODEL [--adapter-artifact SHA --adapter-sha256 SHA] [--chat-template model|minimal_qwen] [--greedy] [--temperature 0.8] [--top-p 1] [--max-tokens 512] | --scripted solver|recoverer|wrong|coin) [--seeds 1] [--parts train] [--limit N] [--max-turns N] [--k 0] [--json]",
  summary:
    "enqueue episodes of a teacher (native tool calls), a local model on the agent or a scripted control on a split's train tasks",
  options: {
    split: { type: "string" },
    teacher: { type: "string" },
    scripted: { type: "string" },
    local: { type: "string" },
    "adapter-artifact": { type: "string" },
    "adapter-sha256": { type: "string" },
    "chat-template": { type: "string" },
    greedy: { type: "boolean" },
    model: { type: "string" },
    temperature: { type: "string" },
    "top-p": { type: "string" },
    "max-tokens": { type: "string" },
    "max-retries": { type: "string" },
    budget: { type: "string" },
    seeds: { type: "string" },
    parts: { type: "string" },
    limit: { type: "string" },
    "max-turns": { type: "string" },
    k: { type: "string" },
    json: { type: "boolean" },
  },
  async run({ values }, ctx) {
    const parts = (typeof values.parts === "string" ? values.parts : "train").split(",").map((p) => p.trim());
    for (const p of parts)
      if (p !== "train" && p !== "dev") throw new UsageError(`--parts takes train and dev, not ${p}`);
    const maxTurns = optNum(values["max-turns"], "--max-turns");
    const k = optNum(values.k, "--k");
    const { jobIds } = await ctx.api().trpc.episodes.runSplit.mutate({
      splitId: str(values.split, "--split"),
      policy: policyOf(values),
      parts: parts as ("train" | "dev")[],
      seeds: num(values.seeds, "--seeds", 1),
      limit: optNum(values.limit, "--limit"),
      ...(maxTurns !== undefined ? { budget: { maxTurns } } : {}),
      ...(k !== undefined ? { branching: { k } } : {}),
    });
    if (values.json) return (writeLine(ctx.out, JSON.stringify({ jobIds })), 0);
    writeLine(
      ctx.out,
      `${jobIds.length} episode job(s) enqueued; they are stored as they finish (agentlab episodes list)`,
    );
    return 0;
  },
};
