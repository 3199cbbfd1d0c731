"use client";

import { useEffect, useRef, useState } from "react";
import { ErrorBox } from "../_components/ErrorBox";
import { useLogTail } from "./useLogTail";

// The agent's own notes (spawned, killed, limits hit) read differently from the job's output.
const streamClass: Record<string, string> = { stderr: "text-red-300", system: "text-sky-300" };

/** A terminal-like tail of one attempt's output; follows the bottom unless the user scrolls up. */
export function LogView({ attemptId, live }: { attemptId: string | null; live: boolean }) {
  const { lines, dropped, error, done } = useLogTail(attemptId, live);
  const box = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);

  useEffect(() => {
    const el = box.current;
    if (el && follow) el.scrollTop = el.scrollHeight;
  }, [lines, follow]);

  if (!attemptId) return <p className="text-sm text-zinc-500">No attempt has started yet, so there is no output.</p>;
  return (
    <div className="space-y-2">
      <ErrorBox error={error} title="Log tail interrupted; retrying" />
      <div
        ref={box}
        onScroll={(e) => {
          const el = e.currentTarget;
          setFollow(el.scrollHeight - el.scrollTop - el.clientHeight < 24);
        }}
        className="max-h-[28rem] min-h-24 overflow-auto rounded-md bg-zinc-950 px-3 py-2 font-mono text-[12px] leading-5 text-zinc-200"
        data-testid="log-tail"
      >
        {dropped ? <div className="text-zinc-500">… {dropped} earlier chunks not shown</div> : null}
        {lines.length === 0 ? (
          <div className="text-zinc-500">{done ? "(no output)" : "waiting for output…"}</div>
        ) : null}
        {lines.map((l) => (
          <span key={l.seq} className={`whitespace-pre-wrap break-all ${streamClass[l.stream] ?? ""}`}>
            {l.data}
          </span>
        ))}
        {live ? <span className="inline-block h-3.5 w-1.5 animate-pulse bg-zinc-400 align-middle" /> : null}
      </div>
      <div className="flex justify-between text-[11px] text-zinc-500">
        <span>
          {lines.length} chunks{live ? " · live" : done ? " · complete" : ""}
        </span>
        {!follow ? (
          <button type="button" className="hover:text-zinc-800" onClick={() => setFollow(true)}>
            Jump to bottom ↓
          </button>
        ) : null}
      </div>
    </div>
  );
}
