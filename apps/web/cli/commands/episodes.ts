import { str, writeLine, type Command } from "../command";
import { runEpisodes } from "./episodes-run";

// Episodes from the terminal: the stored ones (newest first), and one with its steps, branch
// points (each with its continuations' pass rate) and continuations.

const list: Command = {
  name: "episodes list",
  usage: "agentlab episodes list [--task TASK_ROW_ID] [--all] [--limit N] [--json]",
  summary: "stored episodes, newest first (--all: continuations too)",
  options: { task: { type: "string" }, all: { type: "boolean" }, limit: { type: "string" }, json: { type: "boolean" } },
  async run({ values }, ctx) {
    const limit = typeof values.limit === "string" ? Number(values.limit) : 50;
    if (!Number.isInteger(limit) || limit < 1)
      return (writeLine(ctx.err, `--limit must be a positive integer, got ${values.limit}`), 2);
    const rows = await ctx.api().trpc.episodes.list.query({
      taskRowId: typeof values.task === "string" ? values.task : undefined,
      all: values.all === true,
      limit,
    });
    if (values.json) return (writeLine(ctx.out, JSON.stringify(rows)), 0);
    for (const e of rows)
      writeLine(
        ctx.out,
        `${e.id}  ${e.taskKey}  ${e.policyName}  seed ${e.seed}  ${e.verdict}  ${e.turns} turns  ${e.testRuns} test runs` +
          `${e.submittedBy === "budget" ? `  (budget: ${e.exhausted ?? "?"})` : ""}${e.parentEpisodeId ? `  continuation of ${e.parentEpisodeId}` : ""}`,
      );
    if (rows.length === 0) writeLine(ctx.out, "no episodes");
    return 0;
  },
};

const show: Command = {
  name: "episodes show",
  usage: "agentlab episodes show EPISODE_ID [--json]",
  summary: "one episode: its steps, branch points with their pass rate, and continuations",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const id = str(positionals[0], "EPISODE_ID");
    const e = await ctx.api().trpc.episodes.byId.query({ id });
    if (values.json) return (writeLine(ctx.out, JSON.stringify(e)), 0);
    const ep = e.episode;
    writeLine(
      ctx.out,
      `episode ${ep.id}: ${ep.taskKey}, ${ep.policyName} (${ep.policyHash.slice(0, 12)}), seed ${ep.seed}`,
    );
    writeLine(
      ctx.out,
      `verdict ${ep.verdict} (judge), ${ep.turns} turns, ${ep.testRuns} test runs, submitted by ${ep.submittedBy}`,
    );
    for (const s of e.steps) {
      const status = s.refusal ? `refused: ${s.refusal}` : s.status;
      const first = s.result?.output.split("\n")[0] ?? "";
      writeLine(
        ctx.out,
        `  ${String(s.index).padStart(3)} ${s.role === "environment" ? "env" : "   "} ${s.tool}${argsText(s.args)}  [${status}] ${first}`,
      );
    }
    for (const b of e.branches)
      writeLine(
        ctx.out,
        `  branch point ${b.kind} (${b.stateHash.slice(0, 12)}): ${b.passes}/${b.continuations} continuations pass${b.passRate === null ? "" : ` (${Math.round(b.passRate * 100)}%)`}`,
      );
    for (const c of e.continuations) writeLine(ctx.out, `  continuation ${c.id} seed ${c.seed}: ${c.verdict}`);
    return 0;
  },
};

function argsText(args: unknown): string {
  if (typeof args !== "object" || args === null) return "";
  const a = args as Record<string, unknown>;
  const parts = ["path", "start", "end"].filter((k) => a[k] !== undefined).map((k) => `${k}=${String(a[k])}`);
  return parts.length ? `(${parts.join(", ")})` : "";
}

export const episodeCommands = [list, show, runEpisodes];
