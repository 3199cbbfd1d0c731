import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { JobState, isTerminal } from "@agentlab/core";
import { crossFileCountText } from "../../client/cross-file";
import { UsageError, num, str, writeLine, type Command } from "../command";
import { namedEnvVar } from "../env";
import { resolvePoolId } from "./pools";
import { isUuid, resolveExperiment } from "./resolve";

// Reports, jobs, agents, providers and audits from the terminal; every list has --json.

/** A report id, or the report of an experiment given by name or id. */
async function reportIdOf(ctx: Parameters<Command["run"]>[1], ref: string): Promise<string> {
  const api = ctx.api().trpc;
  if (isUuid(ref)) {
    const byExp = await api.reports.byExperiment.query({ experimentId: ref });
    if (byExp) return byExp.id;
    return ref;
  }
  const rep = await api.reports.byExperiment.query({ experimentId: await resolveExperiment(ctx, ref) });
  if (!rep) throw new UsageError(`experiment "${ref}" has no report yet`);
  return rep.id;
}

const reportShow: Command = {
  name: "reports show",
  usage: "agentlab reports show REPORT|EXPERIMENT [--json]",
  summary: "print a report in the terminal (Markdown), or its JSON",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const id = await reportIdOf(ctx, str(positionals[0], "REPORT|EXPERIMENT"));
    const res = await ctx.api().trpc.reports.export.query({ id, format: values.json ? "json" : "markdown" });
    ctx.out.write(res.content.endsWith("\n") ? res.content : `${res.content}\n`);
    return 0;
  },
};

const reportExport: Command = {
  name: "reports export",
  usage: "agentlab reports export REPORT|EXPERIMENT --format json|csv|markdown [--out FILE]",
  summary: "export a report (to stdout, or a file)",
  options: { format: { type: "string" }, out: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const format = str(values.format, "--format");
    if (format !== "json" && format !== "csv" && format !== "markdown")
      throw new UsageError("--format is json, csv or markdown");
    const id = await reportIdOf(ctx, str(positionals[0], "REPORT|EXPERIMENT"));
    const res = await ctx.api().trpc.reports.export.query({ id, format });
    if (typeof values.out === "string") {
      await writeFile(resolve(ctx.cwd, values.out), res.content);
      writeLine(ctx.err, `wrote ${values.out} (${res.content.length} characters)`);
    } else ctx.out.write(res.content);
    return 0;
  },
};

const jobsList: Command = {
  name: "jobs list",
  usage: "agentlab jobs list [--state S] [--type T] [--experiment NAME|ID] [--limit N] [--json]",
  summary: "jobs, newest first, with a filter by state, type or experiment",
  options: {
    state: { type: "string" },
    type: { type: "string" },
    experiment: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
  },
  async run({ values }, ctx) {
    const state = typeof values.state === "string" ? JobState.safeParse(values.state) : null;
    if (state && !state.success) throw new UsageError(`--state is one of ${JobState.options.join(", ")}`);
    const experimentId =
      typeof values.experiment === "string" ? await resolveExperiment(ctx, values.experiment) : undefined;
    const limit = num(values.limit, "--limit", 100);
    const jobs = await ctx.api().trpc.jobs.list.query({
      ...(state?.data ? { state: state.data } : {}),
      ...(typeof values.type === "string" ? { type: values.type } : {}),
      ...(experimentId ? { experimentId } : {}),
      limit,
    });
    if (values.json) return (writeLine(ctx.out, JSON.stringify(jobs)), 0);
    writeLine(ctx.out, ["ID", "TYPE", "STATE", "ATTEMPTS", "CREATED", "ERROR"].join("\t"));
    for (const j of jobs)
      writeLine(
        ctx.out,
        [j.id, j.type, j.state, j.attempts, new Date(j.createdAt).toISOString(), j.error ?? ""].join("\t"),
      );
    if (jobs.length === limit) writeLine(ctx.err, `showing the newest ${limit}; raise --limit or filter for more`);
    return 0;
  },
};

const jobsLogs: Command = {
  name: "jobs logs",
  usage: "agentlab jobs logs JOB [--follow] [--interval SECONDS]",
  summary: "the log of a job's latest attempt; --follow keeps printing until the job ends",
  options: { follow: { type: "boolean", short: "f" }, interval: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const jobId = str(positionals[0], "JOB");
    const api = ctx.api().trpc;
    const every = num(values.interval, "--interval", 1) * 1000;
    let after = -1;
    let attemptId: string | null = null;
    for (;;) {
      const { job, attempts } = await api.jobs.byId.query({ id: jobId });
      const latest = attempts.at(-1)?.id ?? null;
      if (latest && latest !== attemptId) {
        if (attemptId) writeLine(ctx.err, `— attempt ${latest} —`);
        attemptId = latest;
        after = -1;
      }
      if (attemptId) {
        for (;;) {
          const lines = await api.jobs.logs.query({ attemptId, afterSeq: after, limit: 2000 });
          for (const l of lines) ctx.out.write(l.data);
          const last = lines.at(-1);
          if (!last) break;
          after = last.seq;
        }
      }
      if (!values.follow || isTerminal(job.state)) {
        if (values.follow) writeLine(ctx.err, `job ${job.state}${job.error ? `: ${job.error}` : ""}`);
        return 0;
      }
      await new Promise((r) => setTimeout(r, every));
    }
  },
};

const agentsList: Command = {
  name: "agents list",
  usage: "agentlab agents list [--json]",
  summary: "enrolled agents: online, sandbox self-test, GPUs, labels",
  options: { json: { type: "boolean" } },
  async run({ values }, ctx) {
    const agents = await ctx.api().trpc.agents.list.query();
    if (values.json) return (writeLine(ctx.out, JSON.stringify(agents)), 0);
    writeLine(ctx.out, ["NAME", "STATUS", "SANDBOX", "GPUS", "LABELS", "ID"].join("\t"));
    for (const a of agents) {
      const sb = a.capabilities?.sandbox;
      const status = a.revokedAt ? "revoked" : a.online ? (a.drain ? "draining" : "online") : "offline";
      writeLine(
        ctx.out,
        [
          a.name,
          status,
          sb ? `${sb.backend} ${sb.selfTestPassed ? "ok" : "FAILED"}` : "—",
          a.capabilities?.gpus.length ?? 0,
          a.labels.join(",") || "—",
          a.id,
        ].join("\t"),
      );
    }
    return 0;
  },
};

const agentsToken: Command = {
  name: "agents token",
  usage: "agentlab agents token NAME [--labels a,b] [--ttl MINUTES] [--json]",
  summary: "create a one-time enrollment token for a new agent (admins)",
  options: { labels: { type: "string" }, ttl: { type: "string" }, json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const labels =
      typeof values.labels === "string"
        ? values.labels
            .split(",")
            .map((l) => l.trim())
            .filter(Boolean)
        : [];
    const res = await ctx.api().trpc.agents.createEnrollmentToken.mutate({
      name: str(positionals[0], "NAME"),
      labels,
      ttlMinutes: num(values.ttl, "--ttl", 60),
    });
    if (values.json) return (writeLine(ctx.out, JSON.stringify(res)), 0);
    writeLine(ctx.out, res.token);
    writeLine(ctx.err, `enroll with: agentlab-agent --server ${ctx.api().server} --enroll-token ${res.token}`);
    return 0;
  },
};

const providersList: Command = {
  name: "providers list",
  usage: "agentlab providers list [--json]",
  summary: "teacher providers (ids, names, kinds, models; keys are never shown)",
  options: { json: { type: "boolean" } },
  async run({ values }, ctx) {
    const ps = await ctx.api().trpc.providers.list.query();
    if (values.json) return (writeLine(ctx.out, JSON.stringify(ps)), 0);
    writeLine(ctx.out, ["NAME", "KIND", "MODEL", "BASE URL", "KEY", "ID"].join("\t"));
    for (const p of ps)
      writeLine(ctx.out, [p.name, p.kind, p.model, p.baseUrl ?? "—", p.hasApiKey ? "set" : "—", p.id].join("\t"));
    return 0;
  },
};

const providersAdd: Command = {
  name: "providers add",
  usage:
    "agentlab providers add NAME --kind openai|reference [--model M] [--base-url URL] [--api-key-env VAR] [--json]",
  summary: "add a teacher provider (admins); the key is read from an environment variable, never an argument",
  options: {
    kind: { type: "string" },
    model: { type: "string" },
    "base-url": { type: "string" },
    "api-key-env": { type: "string" },
    json: { type: "boolean" },
  },
  async run({ positionals, values }, ctx) {
    const kind = str(values.kind, "--kind");
    if (kind !== "openai" && kind !== "reference") throw new UsageError("--kind is openai or reference");
    const envVar = values["api-key-env"];
    const apiKey = typeof envVar === "string" ? namedEnvVar(envVar) : undefined;
    if (typeof envVar === "string" && !apiKey) throw new UsageError(`environment variable ${envVar} is empty`);
    const p = await ctx.api().trpc.providers.create.mutate({
      name: str(positionals[0], "NAME"),
      kind,
      model: typeof values.model === "string" ? values.model : "reference",
      ...(typeof values["base-url"] === "string" ? { baseUrl: values["base-url"] } : {}),
      ...(apiKey ? { apiKey } : {}),
      extraParams: {},
    });
    writeLine(ctx.out, values.json ? JSON.stringify(p) : `added provider ${p.name} (${p.id})`);
    return 0;
  },
};

const auditsRun: Command = {
  name: "audits run",
  usage: "agentlab audits run POOL [--rerun] [--unsandboxed] [--json]",
  summary:
    "audit a pool's tasks (reference passes, buggy fails, mutants caught); already-audited tasks are skipped unless --rerun",
  options: { rerun: { type: "boolean" }, unsandboxed: { type: "boolean" }, json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const poolId = await resolvePoolId(ctx, str(positionals[0], "POOL"));
    const res = await ctx.api().trpc.audits.create.mutate({
      poolId,
      rerun: values.rerun === true,
      sandbox: values.unsandboxed ? "process" : "bwrap",
    });
    writeLine(
      ctx.out,
      values.json
        ? JSON.stringify(res)
        : `enqueued ${res.enqueued}, skipped ${res.skipped}, already finished ${res.finished}`,
    );
    return 0;
  },
};

const auditsStatus: Command = {
  name: "audits status",
  usage: "agentlab audits status POOL [--json]",
  summary: "a pool's tasks by their newest audit's status, and its cross-file tasks",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const poolId = await resolvePoolId(ctx, str(positionals[0], "POOL"));
    const s = await ctx.api().trpc.audits.summary.query({ poolId });
    if (values.json) return (writeLine(ctx.out, JSON.stringify(s)), 0);
    writeLine(
      ctx.out,
      `${s.total} tasks: ${Object.entries(s.byState)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`)
        .join(", ")}; ${s.running} running${s.unsandboxed ? `, ${s.unsandboxed} unsandboxed` : ""}`,
    );
    writeLine(ctx.out, `cross-file: ${crossFileCountText(s.crossFile)}`);
    return 0;
  },
};

export const opsCommands = [
  reportShow,
  reportExport,
  jobsList,
  jobsLogs,
  agentsList,
  agentsToken,
  providersList,
  providersAdd,
  auditsRun,
  auditsStatus,
];
