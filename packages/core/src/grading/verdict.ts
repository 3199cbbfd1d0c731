import type { GradeVerdict, TestOutcome } from "./schemas";

// The fake-pass protocol's decision (architecture brief §5), kept pure so that every rule is
// unit-tested. The in-sandbox runner reports what happened through two independent channels
// (pytest's JUnit XML and our trusted plugin's hook stream) plus the real exit status that the
// supervisor got from wait(); a pass needs all of them to tell the same story.

export type RunEvidence = {
  /** Set when grading could not happen for reasons outside the candidate (missing python …). */
  infraError: string | null;
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
};

export type Decision = { verdict: GradeVerdict; reasons: string[] };

/** pytest's exit status when tests ran and some failed; the canary guarantees at least one failure. */
export const PYTEST_TESTS_FAILED = 1;
export const COLLECT_SUFFIX = "::[collection]";

const moduleOf = (id: string): string => id.split("::")[0] ?? id;

export function decideVerdict(ev: RunEvidence): Decision {
  if (ev.infraError) return { verdict: "infra_error", reasons: [ev.infraError] };
  if (ev.syntaxErrors.length > 0) return { verdict: "fail_syntax", reasons: ev.syntaxErrors };
  if (ev.limit) return { verdict: ev.limit, reasons: [ev.limitDetail || ev.limit] };
  if (ev.runnerLost) return { verdict: "tampered", reasons: ["the trusted runner was killed or disturbed"] };
  const tamper = tamperEvidence(ev);
  if (tamper.length > 0) return { verdict: "tampered", reasons: tamper };
  const tests = (ev.junit ?? []).filter((t) => t.layer !== "canary");
  const failing = (layer: "public" | "hidden") => tests.filter((t) => t.layer === layer && t.outcome !== "passed");
  const pub = failing("public");
  if (pub.length > 0) return { verdict: "fail_public", reasons: pub.map((t) => `${t.id}: ${t.outcome}`) };
  const hid = failing("hidden");
  if (hid.length > 0) return { verdict: "fail_hidden", reasons: hid.map((t) => `${t.id}: ${t.outcome}`) };
  return { verdict: "pass", reasons: [] };
}

function tamperEvidence(ev: RunEvidence): string[] {
  const out: string[] = [];
  if (ev.exitCode !== PYTEST_TESTS_FAILED) out.push(`pytest exit status ${String(ev.exitCode)}, expected ${PYTEST_TESTS_FAILED} (the canary must fail)`);
  if (!ev.junit) return [...out, "no readable JUnit report"];
  if (!ev.plugin) return [...out, "no report from the trusted plugin"];
  const junit = new Map(ev.junit.map((t) => [t.id, t]));
  const plugin = new Map(ev.plugin.map((t) => [t.id, t]));
  if (junit.size !== ev.junit.length) out.push("duplicate test ids in the JUnit report");
  const canaryJ = junit.get(ev.canaryId);
  const canaryP = plugin.get(ev.canaryId);
  if (canaryJ?.outcome !== "failed" || canaryP?.outcome !== "failed") {
    out.push(`canary ${ev.canaryId} did not fail (junit: ${canaryJ?.outcome ?? "missing"}, plugin: ${canaryP?.outcome ?? "missing"})`);
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
