"use client";

import { useEffect, useState } from "react";
import { ago, timestamp, type DateLike } from "../../client/format";

/** Re-renders every few seconds so "12s ago" stays true on pages that sit open. */
export function useNow(intervalMs = 5_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

export function Ago({ at, now }: { at: DateLike; now?: number }) {
  const ticking = useNow();
  if (!at) return <span className="text-zinc-400">—</span>;
  return (
    <time
      dateTime={typeof at === "string" ? at : at.toISOString()}
      title={timestamp(at)}
      className="whitespace-nowrap tabular-nums"
    >
      {ago(at, now ?? ticking)}
    </time>
  );
}
