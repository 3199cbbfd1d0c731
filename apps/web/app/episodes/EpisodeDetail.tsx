"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { Badge } from "../_components/Badge";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { PageHeader, Section } from "../_components/PageHeader";
import { VerdictBadge } from "../_components/StatusBadges";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";
import type { RouterOutputs } from "../_lib/types";
import { Diff } from "../reports/TaskDetail";
import { budgetAfterEachStep, type BudgetUsed } from "./budget";

// One episode's trajectory: every step (the call, the observation the policy saw, the files it
// changed, the budget used after it), the judge's verdict on what was submitted, and the branch
// points with the verdict of each continuation run from them.

type Trajectory = RouterOutputs["episodes"]["byId"];
type Step = Trajectory["steps"][number];
type Budget = Trajectory["episode"]["budget"];

const statusTone = { ok: "green", refused: "amber", error: "red" } as const;

function StepCard({ step, used, budget }: { step: Step; used: BudgetUsed | undefined; budget: Budget }) {
  const tone =
    step.status === "ok" || step.status === "refused" || step.status === "error" ? statusTone[step.status] : "neutral";
  return (
    <li
      className="rounded border border-zinc-200 p-3"
      data-testid="step"
      data-tool={step.tool}
      data-status={step.status}
      data-index={step.index}
    >
      <div className="mb-2 flex flex-wrap items-center gap-2 text-xs">
        <span className="font-mono text-zinc-500">#{step.index}</span>
        <span className="font-mono font-semibold text-zinc-900">{step.tool}</span>
        <Badge tone={step.role === "assistant" ? "blue" : "violet"}>
          {step.role === "assistant" ? "policy call" : "environment (budget)"}
        </Badge>
        <Badge tone={tone}>{step.refusal ? `refused: ${step.refusal}` : step.status}</Badge>
        {used ? (
          <span className="ml-auto text-zinc-500" data-testid="budget-used">
            turns {used.turns}/{budget.maxTurns} · test runs {used.testRuns}/{budget.maxTestRuns} ·{" "}
            {Math.round(used.wallMs)} ms
          </span>
        ) : null}
      </div>
      {step.args && Object.keys(step.args).length > 0 ? (
        <pre className="mb-2 max-h-40 overflow-auto rounded bg-zinc-50 p-2 text-xs" data-testid="call-args">
          {JSON.stringify(step.args, null, 2)}
        </pre>
      ) : null}
      <pre
        className="max-h-64 overflow-auto whitespace-pre-wrap rounded bg-zinc-900 p-2 text-xs text-zinc-100"
        data-testid="observation"
      >
        {step.result ? step.result.output : "(the observation's blob is missing)"}
        {step.result?.truncated ? "\n[truncated to the observation cap]" : ""}
      </pre>
      {step.changes.length > 0 ? (
        <div className="mt-2 space-y-2" data-testid="step-changes">
          {step.changes.map((c) => (
            <Diff key={c.path} title={c.path} before={c.before ?? ""} after={c.after ?? ""} />
          ))}
        </div>
      ) : null}
    </li>
  );
}

function Branches({ t }: { t: Trajectory }) {
  if (t.branches.length === 0) return null;
  return (
    <Section title="Branch points (value = continuations' pass rate)" className="mb-4">
      <Table
        bare
        rows={t.branches}
        rowKey={(b) => b.id}
        columns={[
          { key: "kind", header: "State", cell: (b) => (b.kind === "start" ? "start (t = 0)" : "after failed tests") },
          { key: "hash", header: "Hash", cell: (b) => <Mono value={b.stateHash} chars={12} /> },
          {
            key: "value",
            header: "Pass rate",
            cell: (b) => (
              <span data-testid="branch-value" data-kind={b.kind}>
                {b.passes}/{b.continuations}
                {b.passRate === null ? "" : ` (${Math.round(b.passRate * 100)}%)`}
              </span>
            ),
          },
          {
            key: "runs",
            header: "Continuations",
            cell: (b) => (
              <span className="flex flex-wrap gap-2">
                {b.runs.map((r) => (
                  <Link key={r.id} href={`/episodes/${r.id}`} data-testid="continuation" className="inline-flex gap-1">
                    <span className="text-zinc-500">seed {r.seed}</span>
                    <VerdictBadge verdict={r.verdict} />
                  </Link>
                ))}
              </span>
            ),
          },
        ]}
      />
    </Section>
  );
}

export function EpisodeDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.episodes.byId.queryOptions({ id }));
  if (q.error) return <ErrorBox error={q.error} onRetry={() => void q.refetch()} />;
  const t = q.data;
  if (!t) return <p className="text-sm text-zinc-500">Loading…</p>;
  const e = t.episode;
  const used = budgetAfterEachStep(t.steps, t.startCounters);
  return (
    <div>
      <PageHeader
        title={
          <span className="flex items-center gap-2">
            Episode <Mono value={e.id} copy />
            <span data-testid="episode-verdict">
              <VerdictBadge verdict={e.verdict} />
            </span>
          </span>
        }
        description={`${e.policyName} on ${e.taskKey}, seed ${e.seed}`}
        meta={
          <>
            <span>
              {e.turns}/{e.budget.maxTurns} turns · {e.testRuns}/{e.budget.maxTestRuns} test runs
            </span>
            <span>submitted by {e.submittedBy === "budget" ? `the budget (${e.exhausted ?? "?"})` : "the policy"}</span>
            {e.parentEpisodeId ? (
              <Link href={`/episodes/${e.parentEpisodeId}`} data-testid="parent-episode">
                continuation of {e.parentEpisodeId.slice(0, 8)}, from state <Mono value={e.fromStateHash} chars={12} />
              </Link>
            ) : null}
          </>
        }
      />
      {e.grade.reasons.length > 0 ? (
        <Section title="The judge's reasons" className="mb-4">
          <ul className="list-disc pl-5 text-xs text-zinc-700">
            {e.grade.reasons.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
        </Section>
      ) : null}
      <Branches t={t} />
      <Section title={`Steps (${t.steps.length})`}>
        <ol className="space-y-3">
          {t.steps.map((s, i) => (
            <StepCard key={s.index} step={s} used={used[i]} budget={e.budget} />
          ))}
        </ol>
      </Section>
    </div>
  );
}
