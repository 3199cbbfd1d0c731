import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import { checkStudyDefinition, type StudyDefinition } from "@agentlab/core";
import { UsageError, str, writeLine, type CliContext, type Command } from "../command";
import { interval, pValue, pct, pp } from "../../client/format";
import { isUuid, resolveDataset, resolveSplit } from "./resolve";

// Studies from the terminal: a study file (YAML or JSON: arms that each differ from the reference
// in one declared factor, primary contrasts, seeds), checked here with core's own check so a bad
// field is named with its file and line before any request; its power plan; creation; the report.

type Loaded = { definition: StudyDefinition };

/** Dotted zod path → the line of the deepest node of the file that exists on that path. */
function lineOf(doc: ReturnType<typeof parseDocument>, lc: LineCounter, field: string): number | null {
  const path = field.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  for (let n = path.length; n > 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node?.range) return lc.linePos(node.range[0]).line;
  }
  return null;
}

/** Split and snapshot references given as names become ids (every other field is the server's schema). */
async function withIds(ctx: CliContext, raw: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out = { ...raw };
  if (typeof raw.splitId === "string" && !isUuid(raw.splitId)) out.splitId = await resolveSplit(ctx, raw.splitId);
  const fix = async (part: unknown) => {
    if (typeof part !== "object" || part === null) return part;
    const p = part as { recipe?: Record<string, unknown> };
    const ds = p.recipe?.datasetId;
    if (typeof ds !== "string" || isUuid(ds)) return part;
    return { ...p, recipe: { ...p.recipe, datasetId: await resolveDataset(ctx, ds) } };
  };
  out.reference = await fix(raw.reference);
  if (Array.isArray(raw.arms)) out.arms = await Promise.all(raw.arms.map(fix));
  return out;
}

async function load(ctx: CliContext, file: string): Promise<Loaded | null> {
  const text = await readFile(resolve(ctx.cwd, file), "utf8");
  const lc = new LineCounter();
  // JSON is YAML: one parser gives both formats their line numbers.
  const doc = parseDocument(text, { lineCounter: lc });
  if (doc.errors.length) throw new UsageError(`${file}: not valid YAML/JSON: ${doc.errors[0]?.message ?? ""}`);
  const raw: unknown = doc.toJS();
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new UsageError(
      `${file}: a study is an object (name, splitId, baseModel, evaluation, seeds, reference, arms, contrasts)`,
    );
  const r = checkStudyDefinition(await withIds(ctx, raw as Record<string, unknown>));
  if (r.ok) return { definition: r.definition };
  for (const [field, msgs] of Object.entries(r.issues.fieldErrors)) {
    const line = lineOf(doc, lc, field);
    for (const m of msgs) writeLine(ctx.err, `${file}${line ? `:${line}` : ""}: ${field}: ${m}`);
  }
  for (const m of r.issues.formErrors) writeLine(ctx.err, `${file}: ${m}`);
  return null;
}

const plan: Command = {
  name: "studies plan",
  usage: "agentlab studies plan STUDY.(yaml|json) [--json]",
  summary: "power before cost: the MDE at 80% power of each primary contrast, and the arms' evaluation work and time",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const file = str(positionals[0], "STUDY");
    const l = await load(ctx, file);
    if (!l) return 1;
    const p = await ctx.api().trpc.studies.plan.query(l.definition);
    if (values.json) return (writeLine(ctx.out, JSON.stringify(p)), 0);
    const w = p.power;
    writeLine(
      ctx.out,
      `${w.testTasks} test tasks in ${w.units} ${w.unit === "cluster" ? "clusters" : "source groups"}; ${w.seeds} seeds; ${w.samplesPerTask} sample(s) per task; ` +
        `assumed: ${pct(w.assumptions.changeRate)} of tasks change between arms, within-unit correlation ${w.assumptions.withinUnitCorrelation}`,
    );
    for (const c of w.contrasts)
      writeLine(
        ctx.out,
        `  ${c.arms[0]} vs ${c.arms[1]}: MDE at ${100 * w.power}% power ${c.mdeHolm === null ? "—" : pp(c.mdeHolm)} (Holm's first step, α/${w.contrasts.length}) … ${c.mdeAlpha === null ? "—" : pp(c.mdeAlpha)} (α = ${w.alpha})`,
      );
    for (const n of w.notes) writeLine(ctx.out, `  note: ${n}`);
    writeLine(
      ctx.out,
      `evaluation work: ${p.work.answers} answers over ${p.arms.length} arms (dev ${p.work.dev.answers}, test ${p.work.test.answers})`,
    );
    const e = p.estimate;
    writeLine(
      ctx.out,
      e.kind === "estimate"
        ? `estimated ${(e.totalS / 3600).toFixed(2)} h of agent time (${e.note})`
        : `no time estimate: ${e.reason}`,
    );
    return 0;
  },
};

const create: Command = {
  name: "studies create",
  usage: "agentlab studies create STUDY.(yaml|json) [--json]",
  summary: "create a study from its file: one experiment per arm, one test claim for all of them",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const file = str(positionals[0], "STUDY");
    const l = await load(ctx, file);
    if (!l) return 1;
    const res = await ctx.api().trpc.studies.create.mutate(l.definition);
    writeLine(
      ctx.out,
      values.json ? JSON.stringify(res) : `created study ${res.id} (${res.experimentIds.length} arms)`,
    );
    return 0;
  },
};

const show: Command = {
  name: "studies show",
  usage: "agentlab studies show ID [--json]",
  summary: "a study's arms, its test claim and, once every arm is done, its report (--json: the report as exported)",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const id = str(positionals[0], "ID");
    if (!isUuid(id)) throw new UsageError("ID: a study id (agentlab studies list)");
    const s = await ctx.api().trpc.studies.byId.query({ id });
    if (values.json) return (writeLine(ctx.out, JSON.stringify(s.report ?? s)), 0);
    writeLine(ctx.out, `${s.name} (${s.id}): ${s.state}`);
    if (s.state === "failed") writeLine(ctx.out, `ended without a report: ${s.error ?? "an arm stopped"}`);
    for (const a of s.arms)
      writeLine(
        ctx.out,
        `  ${a.name.padEnd(16)} ${a.role.padEnd(9)} ${(a.factor ?? "—").padEnd(24)} ${a.state.padEnd(9)} ${String(Math.round(a.progress * 100)).padStart(3)}%${a.waitingForStudyClaim ? "  waiting for the study's test claim" : ""}`,
      );
    writeLine(
      ctx.out,
      s.testClaim
        ? `test claim ${s.testClaim.claimedAt}: ${s.testClaim.models.length} models over ${s.arms.length} arms`
        : "test set not claimed yet",
    );
    const r = s.report;
    if (!r) return 0;
    writeLine(ctx.out, ["ARM", "DEV", "TEST", "TOKENS", "SAMPLES", "TASKS", "STEPS"].join("\t"));
    for (const a of r.arms)
      writeLine(
        ctx.out,
        [
          a.name,
          pct(a.dev),
          pct(a.test),
          a.supervisedTokens ?? "—",
          a.trainSamples ?? "—",
          a.trainTasks ?? "—",
          a.steps.map((n) => n ?? "—").join(","),
        ].join("\t"),
      );
    for (const c of r.contrasts)
      writeLine(
        ctx.out,
        `  ${c.arms[0]} − ${c.arms[1]}: Δ ${pp(c.delta)} ${interval(c.interval[0], c.interval[1])}, p ${pValue(c.p)}, Holm p ${pValue(c.p_holm)}: ${c.significant ? "significant" : "not significant"} (${c.scope})`,
      );
    if (r.aa)
      writeLine(
        ctx.out,
        `  A/A ${r.aa.arms[0]} − ${r.aa.arms[1]}: Δ ${pp(r.aa.delta)} ${interval(r.aa.interval[0], r.aa.interval[1])}, p ${pValue(r.aa.p)}`,
      );
    writeLine(ctx.out, `the split's test set has been read ${r.testClaim.readsOfSplit} time(s)`);
    return 0;
  },
};

const list: Command = {
  name: "studies list",
  usage: "agentlab studies list [--json]",
  summary: "studies, newest first",
  options: { json: { type: "boolean" } },
  async run({ values }, ctx) {
    const rows = await ctx.api().trpc.studies.list.query();
    if (values.json) return (writeLine(ctx.out, JSON.stringify(rows)), 0);
    for (const r of rows) writeLine(ctx.out, [r.name, r.state, r.testClaimId ? "claimed" : "—", r.id].join("\t"));
    return 0;
  },
};

export const studyCommands: Command[] = [plan, create, show, list];
