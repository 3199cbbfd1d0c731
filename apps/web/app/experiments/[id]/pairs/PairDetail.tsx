"use client";

import Link from "next/link";
import { useState, type ReactNode } from "react";
import type { RouterOutputs } from "../../../_lib/types";
import { VerdictBadge } from "../../../_components/StatusBadges";
import { Badge } from "../../../_components/Badge";
import { Diff } from "../../../reports/TaskDetail";
import { LAYER_TEXT, SOURCE_TEXT } from "../../../_lib/pairs";

// One preference pair opened under its row: the prompt the model saw, the chosen (passing) and the
// rejected (failing) answer side by side or as a diff, and the tests the rejected answer failed.

export type PairRow = RouterOutputs["pairs"]["browse"]["rows"][number];

function Answer({ title, text, testId }: { title: ReactNode; text: string; testId: string }) {
  return (
    <div className="min-w-0 rounded border border-zinc-200 bg-white" data-testid={testId}>
      <div className="border-b border-zinc-100 bg-zinc-50 px-2 py-1 text-xs text-zinc-600">{title}</div>
      <pre className="max-h-[28rem] overflow-auto whitespace-pre p-2 font-mono text-xs leading-5 text-zinc-800">
        {text}
      </pre>
    </div>
  );
}

export function PairDetail({ pair }: { pair: PairRow }) {
  const [mode, setMode] = useState<"side" | "diff">("side");
  return (
    <div className="space-y-3" data-testid="pair-detail">
      <div>
        <h3 className="mb-1 text-xs font-medium text-zinc-500">Prompt</h3>
        <div className="space-y-1" data-testid="pair-prompt">
          {pair.prompt.map((m, i) => (
            <div key={i} className="rounded border border-zinc-200 bg-white">
              <div className="border-b border-zinc-100 px-2 py-0.5 text-[11px] uppercase text-zinc-500">{m.role}</div>
              <pre className="max-h-64 overflow-auto whitespace-pre-wrap p-2 font-mono text-xs text-zinc-800">
                {m.content}
              </pre>
            </div>
          ))}
        </div>
      </div>
      <div className="flex flex-wrap items-center gap-2 text-xs">
        <span className="text-zinc-500">Rejected answer failed at</span>
        <Badge tone="red">{LAYER_TEXT[pair.failingLayer]}</Badge>
        <VerdictBadge verdict={pair.rejectedVerdict} />
        <span className="text-zinc-500">
          ({SOURCE_TEXT[pair.rejectedSource]} of <span className="font-mono">{pair.rejectedModelKey}</span>, sample{" "}
          {pair.rejectedSample})
        </span>
        {pair.stateHash ? (
          // An episode-branch pair: both answers continue the same stored state; each opens in the trajectory viewer.
          <span className="text-zinc-500" data-testid="pair-state">
            from state <span className="font-mono">{pair.stateHash.slice(0, 12)}</span>:{" "}
            {pair.chosenEpisodeId ? <Link href={`/episodes/${pair.chosenEpisodeId}`}>chosen episode</Link> : null}
            {" · "}
            {pair.rejectedEpisodeId ? <Link href={`/episodes/${pair.rejectedEpisodeId}`}>rejected episode</Link> : null}
          </span>
        ) : null}
        <div role="tablist" aria-label="answers" className="ml-auto flex gap-1">
          {(["side", "diff"] as const).map((m) => (
            <button
              key={m}
              role="tab"
              aria-selected={mode === m}
              onClick={() => setMode(m)}
              className={`rounded border px-2 py-0.5 ${mode === m ? "border-zinc-800 bg-zinc-800 text-white" : "border-zinc-300 bg-white"}`}
            >
              {m === "side" ? "side by side" : "rejected → chosen diff"}
            </button>
          ))}
        </div>
      </div>
      {mode === "side" ? (
        <div className="grid gap-3 lg:grid-cols-2">
          <Answer
            testId="pair-chosen"
            text={pair.chosenText}
            title={
              <>
                chosen · <Badge tone="green">pass</Badge> · {SOURCE_TEXT[pair.chosenSource]}
              </>
            }
          />
          <Answer
            testId="pair-rejected"
            text={pair.rejectedText}
            title={
              <>
                rejected · <VerdictBadge verdict={pair.rejectedVerdict} /> · {SOURCE_TEXT[pair.rejectedSource]}
              </>
            }
          />
        </div>
      ) : (
        <Diff before={pair.rejectedText} after={pair.chosenText} title="rejected → chosen" />
      )}
      <div>
        <h3 className="mb-1 text-xs font-medium text-zinc-500">
          Failing tests of the rejected answer ({pair.failingTests.length})
        </h3>
        {pair.failingTests.length ? (
          <ul className="space-y-0.5 font-mono text-xs text-red-800" data-testid="pair-failing-tests">
            {pair.failingTests.map((t) => (
              <li key={t}>{t}</li>
            ))}
          </ul>
        ) : (
          <p className="text-xs text-zinc-500">
            No test id recorded: the answer failed before any test ran ({LAYER_TEXT[pair.failingLayer]}).
          </p>
        )}
      </div>
    </div>
  );
}
