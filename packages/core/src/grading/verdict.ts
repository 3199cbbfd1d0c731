import type { GradeVerdict, TestOutcome } from "./schemas";

// The verdict (architecture brief §5), kept pure so that every rule is unit-tested. The judge
// process reports what happened through two channels (pytest's JUnit XML and our plugin's hook
// stream), the real exit status its supervisor got from wait(), and events about the candidate
// process (a call that timed out, a broken channel). In the isolated judge none of these can be
// written by candidate code; in the in-process mode the agreement of both channels and the canary
// are what is left. The agent's own interruptions are never a verdict about the candidate.

/** What the judge saw of the candidate process: `timeout` (a call outlived the test's budget),
 * `exited` (the process died), `protocol` (it broke the channel), `resource_limit` (an answer too large),
 * `died` (the judge process itself died after pytest started: only the candidate can have caused it). */
export type CandidateEvent = { kind: string; test: string; detail: string };

export type RunEvidence = {
  /** Set when grading could not happen for reasons outside the candidate (missing python …). */
  infraError: string | null;
  /** The agent stopped the grade itself (shutdown, cancel, lost lease): requeue, never judge. */
  interrupted?: string | null;
  events?: CandidateEvent[];
  /** Candidate files that do not compile, with the compiler's message. */
  syntaxErrors: string[];
  limit: "timeout" | "resource_limit" | null;
  limitDetail: string;
  /** The trusted runner vanished or answered garbage while the candidate ran. */
  runnerLost: boolean;
  exitCode: number | null;
  junit: TestOutcome[] | null;
  plugin: TestOutcome[] | null;
  canaryId: string;
  /** Test ids (canary excluded) the reference produced; null while computing them from the reference. */
  expectedIds: readonly string[] | null;
  /** Tests the reference itself skipped (the task's own `pytest.skip`): a skip there is no failure. */
  expectedSkips?: readonly string[];
};

export type Decision = { verdict: GradeVerdict; reasons: string[] };

/**
 * Whether training data (SFT, DPO, RL) may rest on a verdict of this isolation: only the isolated
 * judge's. In-process grading is the labelled exception a candidate can forge, so its verdicts are
 * shown in reports but never become a chosen or rejected training answer.
 */
export const trainsOn = (isolation: string | null | undefined): boolean => isolation !== "in_process";

/** pytest's exit status when tests ran and some failed; the canary guarantees at least one failure. */
export const PYTEST_TESTS_FAILED = 1;
export const COLLECT_SUFFIX = "::[collection]";

const moduleOf = (id: string): string => id.split("::")[0] ?? id;

export function decideVerdict(ev: RunEvidence): Decision {
  if (ev.interrupted)
    return { verdict: "infra_error", reasons: [`grading interrupted by the agent: ${ev.interrupted}`] };
  if (ev.infraError) return { verdict: "infra_error", reasons: [ev.infraError] };
  if (ev.syntaxErrors.length > 0) return { verdict: "fail_syntax", reasons: ev.syntaxErrors };
  if (ev.limit) return { verdict: ev.limit, reasons: [ev.limitDetail || ev.limit] };
  // The candidate runs in another process and cannot reach the runner: a lost runner is ours.
  if (ev.runnerLost) return { verdict: "infra_error", reasons: ["the grading sandbox stopped answering"] };
  const events = ev.events ?? [];
  const broke = events.filter((e) => e.kind === "protocol");
  if (broke.length > 0)
    return {
      verdict: "tampered",
      reasons: broke.map((e) => `the candidate broke the judge channel${e.test ? ` in ${e.test}` : ""}: ${e.detail}`),
    };
  // Once pytest started, the candidate alone can end the judge (an abort in the in-process mode,
  // an unwritable report, exit 120): that is its failure, never a no-verdict to retry and drop.
  const died = events.filter((e) => e.kind === "died");
  if (died.length > 0) return { verdict: "tampered", reasons: died.map((e) => e.detail) };
  const tamper = tamperEvidence(ev);
  if (tamper.length > 0) return { verdict: "tampered", reasons: tamper };
  const slow = events.filter((e) => e.kind === "timeout");
  if (slow.length > 0)
    return { verdict: "timeout", reasons: slow.map((e) => `${e.test || "a module import"} timed out: ${e.detail}`) };
  const big = events.filter((e) => e.kind === "resource_limit");
  if (big.length > 0) return { verdict: "resource_limit", reasons: big.map((e) => `${e.test}: ${e.detail}`) };
  const tests = (ev.junit ?? []).filter((t) => t.layer !== "canary");
  // Skips declared by the task are not the candidate's failure: the reference's skips define them
  // (a reference run accepts its own); any other skip fails, whoever caused it.
  const skips = new Set(ev.expectedSkips ?? []);
  const skipOk = (t: TestOutcome) => t.outcome === "skipped" && (ev.expectedIds === null || skips.has(t.id));
  const failing = (layer: "public" | "hidden") =>
    tests.filter((t) => t.layer === layer && t.outcome !== "passed" && !skipOk(t));
  const pub = failing("public");
  if (pub.length > 0) return { verdict: "fail_public", reasons: pub.map((t) => `${t.id}: ${t.outcome}`) };
  const hid = failing("hidden");
  if (hid.length > 0) return { verdict: "fail_hidden", reasons: hid.map((t) => `${t.id}: ${t.outcome}`) };
  return { verdict: "pass", reasons: [] };
}

function tamperEvidence(ev: RunEvidence): string[] {
  const out: string[] = [];
  if (ev.exitCode !== PYTEST_TESTS_FAILED)
    out.push(`pytest exit status ${String(ev.exitCode)}, expected ${PYTEST_TESTS_FAILED} (the canary must fail)`);
  if (!ev.junit) return [...out, "no readable JUnit report"];
  if (!ev.plugin) return [...out, "no report from the trusted plugin"];
  const junit = new Map(ev.junit.map((t) => [t.id, t]));
  const plugin = new Map(ev.plugin.map((t) => [t.id, t]));
  if (junit.size !== ev.junit.length) out.push("duplicate test ids in the JUnit report");
  const canaryJ = junit.get(ev.canaryId);
  const canaryP = plugin.get(ev.canaryId);
  if (canaryJ?.outcome !== "failed" || canaryP?.outcome !== "failed") {
    out.push(
      `canary ${ev.canaryId} did not fail (junit: ${canaryJ?.outcome ?? "missing"}, plugin: ${canaryP?.outcome ?? "missing"})`,
    );
  }
  for (const [id, t] of junit) {
    const p = plugin.get(id);
    if (!p) out.push(`${id} is in the JUnit report but the plugin never saw it`);
    else if (p.outcome !== t.outcome) out.push(`${id}: JUnit says ${t.outcome}, the plugin saw ${p.outcome}`);
  }
  for (const id of plugin.keys()) if (!junit.has(id)) out.push(`${id} ran but is missing from the JUnit report`);
  if (ev.expectedIds) out.push(...idSetMismatch(ev.expectedIds, [...junit.values()], ev.canaryId));
  return out;
}

// The ids that ran must equal the reference's, except that a module which failed to import
// (a collection error, itself a failing entry) legitimately contributes none of its tests.
function idSetMismatch(expected: readonly string[], ran: TestOutcome[], canaryId: string): string[] {
  const brokenModules = new Set(ran.filter((t) => t.id.endsWith(COLLECT_SUFFIX)).map((t) => moduleOf(t.id)));
  const ranIds = new Set(ran.map((t) => t.id).filter((id) => id !== canaryId && !id.endsWith(COLLECT_SUFFIX)));
  const want = new Set(expected.filter((id) => !brokenModules.has(moduleOf(id))));
  const missing = [...want].filter((id) => !ranIds.has(id));
  const extra = [...ranIds].filter((id) => !want.has(id));
  const out: string[] = [];
  if (missing.length > 0) out.push(`expected tests did not run: ${missing.slice(0, 10).join(", ")}`);
  if (extra.length > 0) out.push(`unexpected tests ran: ${extra.slice(0, 10).join(", ")}`);
  return out;
}
