"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { PageHeader, Section } from "../_components/PageHeader";
import { Table, type Column } from "../_components/Table";
import { Ago, useNow } from "../_components/Time";
import { megabytes } from "../../client/format";
import { useTRPC } from "../_lib/trpc";
import type { AgentRow } from "../_lib/types";
import { canAct, useViewer } from "../_lib/viewer";
import { gpuSummary, isStale, runtimeSummary } from "./capabilities";
import { EnrollPanel } from "./EnrollPanel";
import { LocalAgentRestart } from "./LocalAgentRestart";
import { RegisterPanel } from "./RegisterPanel";
import { bwrapMissing, INSTALL_BWRAP } from "@agentlab/core/jobs/eligibility";

function StatusCell({ a, now }: { a: AgentRow; now: number }) {
  if (a.revokedAt) return <Badge tone="red">revoked</Badge>;
  if (!a.online) return <Badge dot>offline</Badge>;
  return (
    <div className="flex flex-wrap gap-1">
      <Badge tone="green" dot>
        online
      </Badge>
      {a.drain ? (
        <Badge tone="amber" title="Finishes its current job, takes no new one">
          draining
        </Badge>
      ) : null}
      {isStale(a.lastHeartbeatAt, a.online, now) ? (
        <Badge tone="amber" title="No heartbeat for over 30 s">
          stale
        </Badge>
      ) : null}
    </div>
  );
}

// The self-test's detail is on the page, not in a tooltip: "bwrap not found" is the whole story
// of an agent that is online, green and idle while grade jobs queue up.
function SandboxCell({ a, retest }: { a: AgentRow; retest: { run(id: string): void; pending: boolean } | null }) {
  const sb = a.capabilities?.sandbox;
  if (!sb) return <span className="text-zinc-400">—</span>;
  return (
    <div className="space-y-1" data-testid={`sandbox-${a.name}`}>
      <div className="flex flex-wrap items-center gap-1">
        <span className="font-mono text-[12px] text-zinc-700">{sb.backend}</span>
        {sb.selfTestPassed ? <Badge tone="green">self-test ok</Badge> : <Badge tone="red">self-test failed</Badge>}
        {sb.backend === "process" ? (
          <Badge tone="amber" title="Results graded here are marked unsandboxed">
            unsandboxed
          </Badge>
        ) : null}
        {retest && a.online && !a.revokedAt ? (
          <Button
            size="sm"
            disabled={retest.pending}
            onClick={() => retest.run(a.id)}
            title="The agent runs its sandbox self-test again now (after installing bubblewrap, say), without a restart"
          >
            Re-run self-test
          </Button>
        ) : null}
      </div>
      {sb.detail ? (
        <p className={`max-w-xs text-xs ${sb.selfTestPassed ? "text-zinc-500" : "text-red-700"}`}>{sb.detail}</p>
      ) : null}
      {!sb.selfTestPassed ? (
        <p className="max-w-xs text-xs text-zinc-600">
          Grade and audit jobs skip this agent. Fix:{" "}
          {bwrapMissing(sb.detail) ? (
            <code>{INSTALL_BWRAP}</code>
          ) : (
            <>
              run <code>agentlab-agent doctor</code>
            </>
          )}{" "}
          on its machine, then re-run the self-test.
        </p>
      ) : null}
    </div>
  );
}

export function AgentsView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const viewer = useViewer();
  const now = useNow(2_000);
  const [enrolling, setEnrolling] = useState(false);
  const [showRevoked, setShowRevoked] = useState(false);
  const [registeringId, setRegisteringId] = useState<string | null>(null);
  const agents = useQuery(trpc.agents.list.queryOptions(undefined, { refetchInterval: 3_000 }));
  const revoke = useMutation(
    trpc.agents.revoke.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.agents.list.queryKey() }),
    }),
  );
  const isAdmin = canAct(viewer, "admin");
  const retest = useMutation(
    trpc.agents.retestSandbox.mutationOptions({
      onSettled: () =>
        setTimeout(() => void queryClient.invalidateQueries({ queryKey: trpc.agents.list.queryKey() }), 1500),
    }),
  );

  const all = agents.data ?? [];
  const rows = showRevoked ? all : all.filter((a) => !a.revokedAt);
  const online = all.filter((a) => a.online && !a.revokedAt).length;
  const revokedCount = all.filter((a) => a.revokedAt).length;
  const registering = isAdmin ? all.find((a) => a.id === registeringId && !a.revokedAt) : undefined;

  const columns: Column<AgentRow>[] = [
    {
      key: "name",
      header: "Agent",
      cell: (a) => (
        <div>
          <div className="font-medium text-zinc-900">{a.name}</div>
          <div className="mt-0.5 flex flex-wrap items-center gap-1">
            <Mono value={a.id} />
            {a.labels.map((l) => (
              <Badge key={l} tone="blue">
                {l}
              </Badge>
            ))}
            {a.shellJobs ? (
              <Badge tone="amber" title="Registered for shell jobs (and their secret environments)">
                shell jobs
              </Badge>
            ) : null}
          </div>
        </div>
      ),
    },
    { key: "status", header: "Status", className: "w-px", cell: (a) => <StatusCell a={a} now={now} /> },
    {
      key: "system",
      header: "System",
      cell: (a) =>
        a.capabilities ? (
          <div className="whitespace-nowrap text-zinc-700">
            <div>{a.capabilities.os}</div>
            <div className="text-xs text-zinc-500">
              {a.capabilities.cpuCores} CPUs · {megabytes(a.capabilities.ramMb)} RAM · v{a.capabilities.agentVersion}
            </div>
          </div>
        ) : (
          <span className="text-zinc-400">never connected</span>
        ),
    },
    {
      key: "gpus",
      header: "GPUs",
      cell: (a) => (
        <span
          className={a.capabilities?.gpus.length ? "text-zinc-800" : "text-zinc-400"}
          title={a.capabilities?.gpus.map((g) => `${g.name} ${g.uuid} driver ${g.driver}`).join("\n")}
        >
          {a.capabilities ? gpuSummary(a.capabilities) : "—"}
          {a.registeredGpus !== null ? (
            <span className="block text-xs text-zinc-500">
              registered: {a.registeredGpus}
              {a.registeredGpuMemoryMb !== null ? ` × ${megabytes(a.registeredGpuMemoryMb)}` : ""}
            </span>
          ) : null}
        </span>
      ),
    },
    {
      key: "runtime",
      header: "Python / torch / CUDA",
      cell: (a) => <span className="whitespace-nowrap text-xs text-zinc-700">{runtimeSummary(a.capabilities)}</span>,
    },
    {
      key: "sandbox",
      header: "Sandbox",
      cell: (a) => (
        <SandboxCell
          a={a}
          retest={isAdmin ? { run: (id) => retest.mutate({ id }), pending: retest.isPending } : null}
        />
      ),
    },
    {
      key: "job",
      header: "Current job",
      className: "w-px",
      cell: (a) =>
        a.currentJobId ? (
          <Link href={`/jobs/${a.currentJobId}`} className="font-mono text-[12px] text-blue-700 hover:underline">
            {a.currentJobId.slice(0, 8)}
          </Link>
        ) : (
          <span className="text-zinc-400">idle</span>
        ),
    },
    { key: "beat", header: "Last heartbeat", className: "w-px", cell: (a) => <Ago at={a.lastHeartbeatAt} now={now} /> },
  ];
  if (isAdmin) {
    columns.push({
      key: "actions",
      header: "",
      className: "w-px text-right",
      cell: (a) =>
        a.revokedAt ? null : (
          <div className="flex justify-end gap-1">
            <Button
              size="sm"
              onClick={() => setRegisteringId(a.id)}
              title="Record its labels, shell-job opt-in and GPUs: what jobs it may claim"
            >
              Register
            </Button>
            <Button
              size="sm"
              variant="danger"
              disabled={revoke.isPending && revoke.variables.id === a.id}
              onClick={() => {
                if (
                  window.confirm(
                    `Revoke agent "${a.name}"? Its credential stops working and it is disconnected at once; a running job is re-queued.`,
                  )
                )
                  revoke.mutate({ id: a.id });
              }}
            >
              Revoke
            </Button>
          </div>
        ),
    });
  }

  return (
    <div className="space-y-5">
      <PageHeader
        title="Agents"
        description="Machines that run grading, training and evaluation jobs."
        meta={
          agents.data ? (
            <>
              <span>{online} online</span>
              <span>·</span>
              <span>{all.length - revokedCount} enrolled</span>
              {revokedCount ? (
                <>
                  <span>·</span>
                  <label className="inline-flex cursor-pointer items-center gap-1">
                    <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} />{" "}
                    show {revokedCount} revoked
                  </label>
                </>
              ) : null}
            </>
          ) : null
        }
        actions={
          isAdmin ? (
            <>
              <LocalAgentRestart />
              {!enrolling ? (
                <Button variant="primary" onClick={() => setEnrolling(true)}>
                  Enroll an agent
                </Button>
              ) : null}
            </>
          ) : null
        }
      />
      {enrolling ? (
        <Section title="New enrollment token">
          <EnrollPanel onClose={() => setEnrolling(false)} />
        </Section>
      ) : null}
      {registering ? (
        <Section title={`Registration of ${registering.name}`}>
          <RegisterPanel key={registering.id} agent={registering} onClose={() => setRegisteringId(null)} />
        </Section>
      ) : null}
      <ErrorBox error={agents.error} title="Could not load agents" onRetry={() => void agents.refetch()} />
      <ErrorBox error={revoke.error} title="Could not revoke the agent" />
      <ErrorBox error={retest.error} title="Could not re-run the self-test" />
      {agents.isPending ? (
        <div className="h-32 animate-pulse rounded-lg border border-zinc-200 bg-white" />
      ) : (
        <Table
          columns={columns}
          rows={rows}
          rowKey={(a) => a.id}
          rowClassName={(a) => (a.revokedAt ? "opacity-60" : "")}
          empty={
            <EmptyState
              title="No agents yet"
              action={
                isAdmin && !enrolling ? (
                  <Button variant="primary" onClick={() => setEnrolling(true)}>
                    Enroll an agent
                  </Button>
                ) : null
              }
            >
              An agent is a small daemon on a GPU or CPU box. Create a one-time enrollment token, then run the command
              it shows on that machine.
            </EmptyState>
          }
        />
      )}
    </div>
  );
}
