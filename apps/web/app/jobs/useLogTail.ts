"use client";

import { useEffect, useRef, useState } from "react";
import { useTRPCClient } from "../_lib/trpc";
import type { LogRow } from "../_lib/types";
import { appendChunks } from "./logTail";

const PAGE = 1000;

/**
 * Follows one attempt's log: pages through what exists, then polls with `afterSeq` while the
 * attempt is live. When it ends the agent has already flushed every chunk (logs are flushed
 * before the terminal state), so one last read after `live` turns false is complete.
 */
export type LogTail = { lines: LogRow[]; dropped: number; error: unknown; done: boolean };

export function useLogTail(attemptId: string | null, live: boolean, pollMs = 1000): LogTail {
  const client = useTRPCClient();
  const liveRef = useRef(live);
  const [state, setState] = useState<LogTail>({ lines: [], dropped: 0, error: null, done: false });
  useEffect(() => {
    liveRef.current = live;
  }, [live]);

  useEffect(() => {
    setState({ lines: [], dropped: 0, error: null, done: false });
    if (!attemptId) return;
    let stopped = false;
    let afterSeq = -1;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const rows = await client.jobs.logs.query({ attemptId, afterSeq, limit: PAGE });
        if (stopped) return;
        const lastRow = rows.at(-1);
        if (lastRow) afterSeq = lastRow.seq;
        setState((s) => ({ ...s, ...appendChunks(s, rows), error: null }));
        if (rows.length === PAGE) {
          timer = setTimeout(tick, 0); // more is waiting: read on at once
        } else if (liveRef.current) {
          timer = setTimeout(tick, pollMs);
        } else {
          setState((s) => ({ ...s, done: true }));
        }
      } catch (err) {
        if (stopped) return;
        setState((s) => ({ ...s, error: err }));
        timer = setTimeout(tick, pollMs * 3);
      }
    };
    void tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [attemptId, client, pollMs]);

  return state;
}
