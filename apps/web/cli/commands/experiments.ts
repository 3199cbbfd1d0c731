import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { ExperimentConfig } from "@agentlab/core";
import { RunListInput } from "@agentlab/core/experiments/runs";
import { issuesByField, summarizeFieldIssues } from "@agentlab/core/validation";
import { UsageError, num, str, writeLine, type CliContext, type Command } from "../command";
import { duration, interval, pValue, pct, pp, timeLeftText } from "../../client/format";
import { isUuid, resolveDataset, resolveExperiment, resolveProvider, resolveSplit } from "./resolve";
import { queueWaitText } from "../../client/queue-wait";

// Experiments from the terminal: a recipe file (JSON or YAML, the same ExperimentConfig the form
// builds; split, provider and dataset by name or id), the runs table, one run, a live wait.

type Recipe = Record<string, unknown> & { splitId?: unknown; datasetId?: unknown; teacher?: Record<string, unknown> };

async function readRecipe(cwd: string, file: string): Promise<Recipe> {
  const text = await readFile(resolve(cwd, file), "utf8");
  let parsed: unknown;
  try {
    parsed = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file}: not valid ${/\.ya?ml$/i.test(file) ? "YAML" : "JSON"}: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new UsageError(`${file}: a recipe is an object (name, splitId, teacher, baseModel, …)`);
  return parsed as Recipe;
}

/** Recipe references given as names become ids (the server validates everything else). */
async function withIds(ctx: CliContext, r: Recipe): Promise<Recipe> {
  const out: Recipe = { ...r };
  if (typeof r.splitId === "string" && !isUuid(r.splitId)) out.splitId = await resolveSplit(ctx, r.splitId);
  if (typeof r.datasetId === "string" && !isUuid(r.datasetId)) out.datasetId = await resolveDataset(ctx, r.datasetId);
  const pid = r.teacher?.providerId;
  if (typeof pid === "string" && !isUuid(pid))
    out.teacher = { ...r.teacher, providerId: await resolveProvider(ctx, pid) };
  return out;
}

const create: Command = {
  name: "experiments create",
  usage: "agentlab experiments create RECIPE.(json|yaml) [--name NAME] [--json]",
  summary: "create and start an experiment from a recipe file (split/provider/dataset by name or id)",
  options: { name: { type: "string" }, json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const file = str(positionals[0], "RECIPE");
    const recipe = await withIds(ctx, await readRecipe(ctx.cwd, file));
    if (typeof values.name === "string") recipe.name = values.name;
    // Checked here with the server's own schema, so a bad field is named with its path before any request.
    const config = ExperimentConfig.safeParse(recipe);
    if (!config.success) {
      const f = issuesByField(config.error.issues);
      for (const [path, msgs] of Object.entries(f.fieldErrors))
        for (const m of msgs) writeLine(ctx.err, `${file}: ${path}: ${m}`);
      for (const m of f.formErrors) writeLine(ctx.err, `${file}: ${m}`);
      return 1;
    }
    const res = await ctx.api().trpc.experiments.create.mutate(config.data);
    writeLine(ctx.out, values.json ? JSON.stringify(res) : `created experiment ${res.id}`);
    return 0;
  },
};

const list: Command = {
  name: "experiments list",
  usage:
    "agentlab experiments list [--state S] [--tag T] [--search TEXT] [--sort KEY] [--asc] [--limit N] [--archived] [--json]",
  summary: "the runs table: outcome, test pass@1 base and adapter, Δ with interval, p, base model, duration",
  options: {
    state: { type: "string" },
    tag: { type: "string" },
    search: { type: "string" },
    sort: { type: "string" },
    asc: { type: "boolean" },
    limit: { type: "string" },
    archived: { type: "boolean" },
    json: { type: "boolean" },
  },
  async run({ values }, ctx) {
    const input = RunListInput.safeParse({
      ...(typeof values.state === "string" ? { state: values.state } : {}),
      ...(typeof values.tag === "string" ? { tag: values.tag } : {}),
      ...(typeof values.search === "string" ? { q: values.search } : {}),
      ...(typeof values.sort === "string" ? { sort: values.sort } : {}),
      dir: values.asc ? "asc" : "desc",
      archived: values.archived === true,
      limit: num(values.limit, "--limit", 50),
    });
    if (!input.success) throw new UsageError(summarizeFieldIssues(issuesByField(input.error.issues)));
    const res = await ctx.api().trpc.runs.list.query(input.data);
    if (values.json) return (writeLine(ctx.out, JSON.stringify(res)), 0);
    writeLine(
      ctx.out,
      ["NAME", "STATE", "OUTCOME", "BASE", "ADAPTER", "DELTA", "P", "MODEL", "DURATION", "ID"].join("\t"),
    );
    for (const r of res.rows) {
      const delta = r.delta === null ? "—" : `${pp(r.delta)} ${interval(r.ciLo, r.ciHi)}`;
      writeLine(
        ctx.out,
        [
          r.name,
          r.state,
          r.outcome ?? "—",
          pct(r.testBase),
          pct(r.testSft),
          delta,
          pValue(r.p),
          r.baseModel ?? "—",
          duration(r.durationMs),
          r.id,
        ].join("\t"),
      );
    }
    writeLine(ctx.err, `${res.rows.length} of ${res.total} runs`);
    return 0;
  },
};

const show: Command = {
  name: "experiments show",
  usage: "agentlab experiments show NAME|ID [--json]",
  summary: "an experiment's stages (state, jobs, duration) and its report's headline",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const id = await resolveExperiment(ctx, str(positionals[0], "NAME|ID"));
    const api = ctx.api().trpc;
    const e = await api.experiments.byId.query({ id });
    const rep = await api.reports.byExperiment.query({ experimentId: id });
    if (values.json) return (writeLine(ctx.out, JSON.stringify({ ...e, reportId: rep?.id ?? null })), 0);
    writeLine(ctx.out, `${e.name} (${e.id}): ${e.state}${e.error ? ` — ${e.error}` : ""}`);
    writeLine(
      ctx.out,
      `base model ${e.config.baseModel.ref}; seeds ${e.config.seeds.join(", ")}; ${e.config.training.epochs} epochs; progress ${Math.round(e.progress * 100)}%${e.remaining ? `; ${timeLeftText(e.remaining)}` : ""}`,
    );
    for (const s of e.stages) {
      const took = s.startedAt
        ? duration(new Date(s.finishedAt ?? Date.now()).getTime() - new Date(s.startedAt).getTime())
        : "—";
      writeLine(
        ctx.out,
        `  ${s.key.padEnd(18)} ${s.state.padEnd(10)} ${String(s.jobsDone).padStart(4)}/${s.jobCount} jobs  ${took}${s.error ? `  ${s.error}` : ""}${s.queueWait ? `  ${queueWaitText(s.queueWait)}` : ""}`,
      );
    }
    if (rep) {
      const r = await api.reports.byId.query({ id: rep.id });
      writeLine(ctx.out, `report ${rep.id}: ${r.report.outcome.headline}`);
    }
    return 0;
  },
};

const BAR = 30;
export function progressBar(fraction: number, label: string): string {
  const f = Math.min(1, Math.max(0, fraction));
  const n = Math.round(f * BAR);
  return `[${"#".repeat(n)}${"-".repeat(BAR - n)}] ${String(Math.round(f * 100)).padStart(3)}% ${label}`;
}

/** No answer at all (connection refused or reset) or a 5xx/503 on the way: the server is restarting. */
function serverAway(err: unknown): boolean {
  const e = err as { data?: { httpStatus?: number } | null; meta?: { response?: { status?: number } } };
  const status = e.data?.httpStatus ?? e.meta?.response?.status;
  return status === undefined || status >= 500;
}

const wait: Command = {
  name: "experiments wait",
  usage: "agentlab experiments wait NAME|ID [--timeout SECONDS] [--interval SECONDS]",
  summary: "follow an experiment with a progress bar until it ends; exit 0 when it succeeded, 1 otherwise",
  options: { timeout: { type: "string" }, interval: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const id = await resolveExperiment(ctx, str(positionals[0], "NAME|ID"));
    const deadline = Date.now() + num(values.timeout, "--timeout", 24 * 3600) * 1000;
    const every = num(values.interval, "--interval", 2) * 1000;
    let last = "";
    let away = false;
    for (;;) {
      // The experiment lives in the server's database: while the server restarts (or a proxy in
      // front of it answers 5xx) the wait keeps waiting, until --timeout, instead of failing.
      const e = await ctx
        .api()
        .trpc.experiments.byId.query({ id })
        .catch((err: unknown) => {
          if (!serverAway(err) || Date.now() > deadline) throw err;
          if (!away) writeLine(ctx.err, "agentlab: the server does not answer; still waiting");
          away = true;
          return null;
        });
      if (!e) {
        await new Promise((r) => setTimeout(r, every));
        continue;
      }
      if (away) writeLine(ctx.err, "agentlab: the server answers again");
      away = false;
      const running = e.stages
        .filter((s) => s.state === "running")
        .map((s) => (s.queueWait ? `${s.key} (${queueWaitText(s.queueWait)})` : s.key))
        .join(", ");
      const line = progressBar(e.progress, e.state === "running" ? running || "waiting" : e.state);
      // One line per change, so a log file or CI output stays readable (no carriage returns).
      if (line !== last) writeLine(ctx.err, line);
      last = line;
      if (e.state !== "running") {
        writeLine(ctx.out, `${e.name}: ${e.state}${e.error ? ` — ${e.error}` : ""}`);
        return e.state === "succeeded" ? 0 : 1;
      }
      if (Date.now() > deadline) {
        writeLine(ctx.err, "agentlab: timed out waiting; the experiment keeps running");
        return 1;
      }
      await new Promise((r) => setTimeout(r, every));
    }
  },
};

const cancel: Command = {
  name: "experiments cancel",
  usage: "agentlab experiments cancel NAME|ID",
  summary: "stop an experiment and cancel its unfinished jobs",
  async run({ positionals }, ctx) {
    const id = await resolveExperiment(ctx, str(positionals[0], "NAME|ID"));
    const res = await ctx.api().trpc.experiments.cancel.mutate({ id });
    writeLine(ctx.out, `experiment ${res.id} ${res.state}`);
    return 0;
  },
};

export const experimentCommands = [create, list, show, wait, cancel];
