"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useHealth } from "../../_lib/health";
import { useTRPC } from "../../_lib/trpc";
import { AddOracle } from "../../providers/AddOracle";
import { Section } from "../PageHeader";
import { cpuDemoShortcut, firstRunSteps, nextStep } from "./firstRun";

/** The guided first run: agent with a working sandbox → pool → split → provider → experiment, each with its link. */
export function FirstRun() {
  const trpc = useTRPC();
  const agents = useQuery(trpc.agents.list.queryOptions(undefined, { refetchInterval: 5_000 }));
  const pools = useQuery(trpc.pools.list.queryOptions());
  const splits = useQuery(trpc.splits.list.queryOptions({}));
  const providers = useQuery(trpc.providers.list.queryOptions());
  const runs = useQuery(trpc.runs.list.queryOptions({ limit: 1, archived: false }));
  const health = useHealth();
  if (!agents.data || !pools.data || !splits.data || !providers.data || !runs.data) return null;
  const online = agents.data.filter((a) => a.online && !a.revokedAt);
  const facts = {
    agentsOnline: online.length,
    sandboxOk: online.filter((a) => a.capabilities?.sandbox.selfTestPassed).length,
    pools: pools.data.length,
    frozenSplits: splits.data.filter((s) => s.frozen).length,
    providers: providers.data.length,
    experiments: runs.data.total,
    localAgent: health.data?.localAgent,
  };
  const steps = firstRunSteps(facts);
  const shortcut = cpuDemoShortcut(facts);
  const next = nextStep(steps);
  if (!next) return null;
  return (
    <Section
      title="Get started"
      actions={
        <span className="text-xs text-zinc-500">
          {steps.filter((s) => s.done).length} of {steps.length} done
        </span>
      }
    >
      <ol className="space-y-2" aria-label="first-run checklist">
        {steps.map((s, i) => (
          <li
            key={s.key}
            data-step={s.key}
            data-done={s.done}
            className={`flex items-start gap-3 rounded-md px-2 py-1.5 ${s === next ? "bg-blue-50" : ""}`}
          >
            <span
              aria-hidden
              className={`mt-0.5 flex size-5 shrink-0 items-center justify-center rounded-full text-[11px] font-semibold ${s.done ? "bg-emerald-500 text-white" : "bg-zinc-200 text-zinc-600"}`}
            >
              {s.done ? "✓" : i + 1}
            </span>
            <div className="min-w-0 flex-1">
              <div className="text-sm font-medium text-zinc-800">
                {s.title} {s.done ? <span className="sr-only">(done)</span> : null}
              </div>
              <div className="text-xs text-zinc-500">{s.detail}</div>
              {s.key === "provider" && !s.done ? (
                <div className="mt-1">
                  <AddOracle />
                </div>
              ) : null}
            </div>
            {!s.done ? (
              <Link
                href={s.href}
                className={`shrink-0 text-sm font-medium ${s === next ? "text-blue-700 underline" : "text-zinc-500 hover:underline"}`}
              >
                {s.action}
              </Link>
            ) : null}
          </li>
        ))}
      </ol>
      {shortcut ? (
        <p className="mt-3 flex flex-wrap items-center gap-x-2 border-t border-zinc-100 pt-3 text-xs text-zinc-600">
          <span className="font-medium text-zinc-800">First time?</span>
          <Link href={shortcut.href} className="text-sm font-medium text-blue-700 underline">
            {shortcut.action}
          </Link>
          <span>— {shortcut.detail}</span>
        </p>
      ) : null}
    </Section>
  );
}
