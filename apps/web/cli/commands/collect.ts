import { num, str, writeLine, UsageError, type Command, type CliContext } from "../command";

// `agentlab collect`: start a teacher collection on the server and follow it to the end.

const TERMINAL = new Set(["done", "stopped_budget", "failed", "canceled"]);

const optNum = (v: string | boolean | undefined, name: string): number | undefined =>
  v === undefined ? undefined : num(v, name);

async function follow(ctx: CliContext, id: string, pollMs: number): Promise<number> {
  let last = "";
  for (;;) {
    const c = await ctx.api().trpc.collections.byId.query({ id });
    const line = `${c.state}\t${c.samplesDone}/${c.samplesTotal} samples\t${c.samplesFailed} failed\t${c.reused} reused\t$${c.costUsd.toFixed(4)} spent\t$${c.costSavedUsd.toFixed(4)} saved`;
    if (line !== last) writeLine(ctx.out, line);
    last = line;
    if (TERMINAL.has(c.state)) {
      if (c.stopReason) writeLine(ctx.out, `${c.state === "failed" ? "error" : "note"}: ${c.stopReason}`);
      writeLine(
        ctx.out,
        `verdicts: ${Object.entries(c.verdicts)
          .map(([k, v]) => `${k}=${v}`)
          .join(" ")}`,
      );
      // A run that produced no usable sample (or mostly failures) ends `failed` on the server: exit 1.
      return c.state === "done" || c.state === "stopped_budget" ? 0 : 1;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

const collect: Command = {
  name: "collect",
  usage:
    "agentlab collect --split ID --provider ID [--n 1] [--temperature 0.8] [--top-p 1] [--max-tokens 2048] [--seed N] [--parts train,dev] [--concurrency 4] [--max-retries 5] [--budget USD] [--experiment ID] [--no-wait]",
  summary: "ask a teacher for candidates on a split's train/dev tasks (cached), grade them, and follow progress",
  options: {
    split: { type: "string" },
    provider: { type: "string" },
    n: { type: "string" },
    temperature: { type: "string" },
    "top-p": { type: "string" },
    "max-tokens": { type: "string" },
    seed: { type: "string" },
    parts: { type: "string" },
    concurrency: { type: "string" },
    "max-retries": { type: "string" },
    budget: { type: "string" },
    experiment: { type: "string" },
    name: { type: "string" },
    "no-wait": { type: "boolean" },
    "poll-ms": { type: "string" },
  },
  async run({ values }, ctx) {
    const parts = (typeof values.parts === "string" ? values.parts : "train").split(",").map((p) => p.trim());
    for (const p of parts) if (!["train", "dev", "test"].includes(p)) throw new UsageError(`unknown part ${p}`);
    const col = await ctx.api().trpc.collections.create.mutate({
      splitId: str(values.split, "--split"),
      providerId: str(values.provider, "--provider"),
      parts: parts as ("train" | "dev" | "test")[],
      nSamples: num(values.n, "--n", 1),
      params: {
        temperature: num(values.temperature, "--temperature", 0.8),
        top_p: num(values["top-p"], "--top-p", 1),
        max_tokens: num(values["max-tokens"], "--max-tokens", 2048),
        seed: optNum(values.seed, "--seed"),
      },
      concurrency: num(values.concurrency, "--concurrency", 4),
      maxRetries: num(values["max-retries"], "--max-retries", 5),
      budgetUsd: optNum(values.budget, "--budget"),
      experimentId: typeof values.experiment === "string" ? values.experiment : undefined,
      name: typeof values.name === "string" ? values.name : undefined,
    });
    writeLine(
      ctx.out,
      `collection ${col.id}: ${col.tasksTotal} tasks × ${col.nSamples} samples${col.providerKind === "reference" ? " (reference ORACLE, not a model)" : ""}`,
    );
    if (values["no-wait"]) return 0;
    return follow(ctx, col.id, num(values["poll-ms"], "--poll-ms", 1000));
  },
};

export const collectCommands = [collect];
