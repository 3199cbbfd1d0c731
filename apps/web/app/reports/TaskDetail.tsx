"use client";

import { useState } from "react";
import type { RouterOutputs } from "../_lib/types";
import { VerdictBadge } from "../_components/StatusBadges";
import { Badge } from "../_components/Badge";
import { diffRows, diffStat, type DiffRow } from "./diff";

// One task of the per-task view: base and the other model side by side, a diff of each against the
// buggy file and against each other, per-layer test outcomes, failing tests and output tails.

export type TaskDetailData = RouterOutputs["reports"]["taskDetail"];
type TaskAnswer = TaskDetailData["answers"][number];
type Side = { key: string; label: string; answer: TaskAnswer | undefined };
type Mode = "base-buggy" | "other-buggy" | "base-other";

const rowTone: Record<DiffRow["kind"], string> = {
  add: "bg-emerald-50 text-emerald-900",
  del: "bg-red-50 text-red-900",
  same: "text-zinc-700",
  skip: "bg-zinc-50 text-zinc-400",
};
const sign: Record<DiffRow["kind"], string> = { add: "+", del: "-", same: " ", skip: "" };

export function Diff({ before, after, title }: { before: string; after: string; title: string }) {
  const rows = diffRows(before, after);
  const st = diffStat(rows);
  return (
    <div className="rounded border border-zinc-200" data-testid="diff">
      <div className="flex justify-between border-b border-zinc-100 bg-zinc-50 px-2 py-1 text-xs text-zinc-600">
        <span className="font-mono">{title}</span>
        <span>
          <span className="text-emerald-700">+{st.added}</span> <span className="text-red-700">-{st.removed}</span>
          {st.added + st.removed === 0 ? " · identical" : ""}
        </span>
      </div>
      <pre className="max-h-[28rem] overflow-auto text-xs leading-5">
        {rows.map((r, i) =>
          r.kind === "skip" ? (
            <div key={i} className={`px-2 ${rowTone.skip}`}>
              ⋯ {r.count} unchanged line{r.count === 1 ? "" : "s"}
            </div>
          ) : (
            <div key={i} className={`flex ${rowTone[r.kind]}`} data-kind={r.kind}>
              <span className="w-8 shrink-0 select-none pr-1 text-right text-zinc-400">{r.oldNo ?? ""}</span>
              <span className="w-8 shrink-0 select-none pr-1 text-right text-zinc-400">{r.newNo ?? ""}</span>
              <span className="w-3 shrink-0 select-none">{sign[r.kind]}</span>
              <span className="whitespace-pre">{r.text}</span>
            </div>
          ),
        )}
      </pre>
    </div>
  );
}

const fileOf = (a: TaskAnswer | undefined, path: string) => a?.files?.find((f) => f.path === path)?.content ?? null;

function Grade({ side }: { side: Side }) {
  const a = side.answer;
  if (!a) return <p className="text-xs text-zinc-500">No answer stored for {side.label}.</p>;
  const g = a.grade;
  const layers = (["public", "hidden", "canary"] as const).map((layer) => {
    const ts = g?.tests.filter((t) => t.layer === layer) ?? [];
    return { layer, n: ts.length, passed: ts.filter((t) => t.outcome === "passed").length };
  });
  const failing = g?.tests.filter((t) => t.outcome === "failed" || t.outcome === "error") ?? [];
  return (
    <div className="space-y-2 text-xs" data-testid={`grade-${side.key}`}>
      <div className="flex flex-wrap items-center gap-2">
        <span className="font-semibold">{side.label}</span>
        <VerdictBadge verdict={a.verdict ?? "no verdict"} />
        {g &&
          (g.isolation === "in_process" ? (
            <Badge tone="amber" title="the weaker mode (docs/grading.md)">
              graded in-process
            </Badge>
          ) : (
            <Badge tone="neutral">isolated judge</Badge>
          ))}
        {g?.unsandboxed && <Badge tone="red">unsandboxed</Badge>}
      </div>
      {a.noVerdict && <p className="text-amber-800">No verdict: {a.noVerdict}</p>}
      {a.parseError && <p className="text-red-700">Answer not parsed: {a.parseError}</p>}
      {g && (
        <table className="text-xs" data-testid="layers">
          <thead>
            <tr className="text-left text-[11px] uppercase tracking-wide text-zinc-500">
              <th className="pr-4">layer</th>
              <th className="pr-4">passed / tests</th>
            </tr>
          </thead>
          <tbody>
            {layers.map((l) => (
              <tr key={l.layer}>
                <td className="pr-4">{l.layer}</td>
                <td className="pr-4">{l.n ? `${l.passed} / ${l.n}` : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {failing.length > 0 && (
        <ul className="space-y-1" data-testid="failing-tests">
          {failing.map((t) => (
            <li key={t.id}>
              <span className="font-mono text-red-700">{t.id}</span> ({t.layer}, {t.outcome})
              {t.message ? (
                <pre className="mt-0.5 max-h-32 overflow-auto whitespace-pre-wrap bg-zinc-50 p-1">{t.message}</pre>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {g && g.reasons.length > 0 && (
        <ul className="list-disc pl-4 text-zinc-700">
          {g.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      )}
      {g?.stdoutTail && (
        <details>
          <summary className="cursor-pointer text-zinc-600">grader output (tail)</summary>
          <pre className="max-h-48 overflow-auto whitespace-pre-wrap bg-zinc-50 p-1">{g.stdoutTail}</pre>
        </details>
      )}
      {g?.candidateOutputTail && (
        <details>
          <summary className="cursor-pointer text-zinc-600">candidate output (tail)</summary>
          <pre className="max-h-48 overflow-auto whitespace-pre-wrap bg-zinc-50 p-1">{g.candidateOutputTail}</pre>
        </details>
      )}
    </div>
  );
}

export function TaskDetail({ data, base, other }: { data: TaskDetailData; base: Side; other: Side }) {
  const [mode, setMode] = useState<Mode>("other-buggy");
  const same = base.key === other.key;
  const sides = same ? [base] : [base, other];
  const modes: { id: Mode; label: string }[] = [
    { id: "base-buggy", label: `${base.label} vs buggy` },
    ...(same
      ? []
      : [
          { id: "other-buggy" as const, label: `${other.label} vs buggy` },
          { id: "base-other" as const, label: `${base.label} vs ${other.label}` },
        ]),
  ];
  const current = same && mode !== "base-buggy" ? "base-buggy" : mode;
  return (
    <div className="space-y-4" data-testid="task-detail">
      <p className="whitespace-pre-wrap text-sm text-zinc-700">{data.instruction}</p>
      <div className={`grid gap-3 ${same ? "" : "md:grid-cols-2"}`}>
        {sides.map((s) => (
          <div key={s.key} className="space-y-2 rounded border border-zinc-200 p-2">
            <Grade side={s} />
            <details>
              <summary className="cursor-pointer text-xs text-zinc-600">raw answer</summary>
              <pre className="max-h-64 overflow-auto whitespace-pre-wrap bg-zinc-50 p-1 text-xs">
                {s.answer?.answer ?? ""}
              </pre>
            </details>
          </div>
        ))}
      </div>
      <div className="flex flex-wrap gap-1" role="tablist" aria-label="diff">
        {modes.map((m) => (
          <button
            key={m.id}
            role="tab"
            aria-selected={current === m.id}
            onClick={() => setMode(m.id)}
            className={`rounded border px-2 py-1 text-xs ${current === m.id ? "border-zinc-800 bg-zinc-800 text-white" : "border-zinc-300 bg-white"}`}
          >
            {m.label}
          </button>
        ))}
      </div>
      {data.buggy.map((f) => {
        const b = fileOf(base.answer, f.path);
        const o = fileOf(other.answer, f.path);
        const pair: [string | null, string | null, string] =
          current === "base-buggy"
            ? [f.content, b, `${f.path}: buggy → ${base.label}`]
            : current === "other-buggy"
              ? [f.content, o, `${f.path}: buggy → ${other.label}`]
              : [b, o, `${f.path}: ${base.label} → ${other.label}`];
        return pair[0] === null || pair[1] === null ? (
          <p key={f.path} className="text-xs text-zinc-500">
            {f.path}: no parsed file on one side, so no diff (see the raw answer).
          </p>
        ) : (
          <Diff key={f.path} before={pair[0]} after={pair[1]} title={pair[2]} />
        );
      })}
    </div>
  );
}
