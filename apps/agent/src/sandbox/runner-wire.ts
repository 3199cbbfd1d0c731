import { createHash } from "node:crypto";
import { RunnerReady, RunnerRequest as CoreRunnerRequest, RunnerResponse as CoreRunnerResponse } from "@agentlab/core";

// What crosses between the host and a grading sandbox's runner (runner.py): the host's request and
// answer types, and the readers of the runner's lines. The sandbox itself is zygote.ts.

export type { RunnerTest } from "@agentlab/core";
/** What the host asks for: the runner's request without the id and the host-decided fields. */
export type RunnerRequest = Omit<CoreRunnerRequest, "id" | "addressSpaceLimit" | "session">;

/** The runner's answer plus what only the host knows (the cgroup's view, its own interruption). */
export type RunnerResponse = CoreRunnerResponse & {
  /** Set when the agent itself stopped the grade (shutdown, cancel): never a verdict. */
  interrupted: string | null;
  /** A session's candidate that was never sent (the session ended before it): not graded at all. */
  unsent?: boolean;
  stderr: string;
  cgroup_peak_kb: number | null;
};

export const emptyResponse = (over: Partial<RunnerResponse> = {}): RunnerResponse => ({
  ...CoreRunnerResponse.parse({}),
  interrupted: null,
  stderr: "",
  cgroup_peak_kb: null,
  ...over,
});
export const lost = (why: string): RunnerResponse => emptyResponse({ runner_lost: true, stderr: why });

/**
 * A single grade in the judge opens a session of up to this many candidates and keeps it open
 * (lingering) for `lingerMs`: the next grade of the same request (tests, files, limits) is sent
 * as its next candidate and gets a judge process forked from the session's warm template.
 */
export const LINGER_CANDIDATES = 64;

/** What makes two requests the same task for a lingering session: everything but the candidate. */
export function lingerKey(req: RunnerRequest): string {
  return createHash("sha256")
    .update(JSON.stringify({ ...req, candidate: null }))
    .digest("hex");
}

export function parseAnswer(line: string): RunnerResponse {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return lost("unparsable answer from the runner");
  }
  const parsed = CoreRunnerResponse.safeParse(raw);
  if (!parsed.success) return lost(`malformed answer from the runner: ${parsed.error.issues[0]?.message ?? ""}`);
  return { ...emptyResponse(), ...parsed.data };
}

/** The zygote's first line, read with core RunnerReady (a non-JSON or other line is not "ready"). */
export function readyLine(line: string): RunnerReady | null {
  try {
    const parsed = RunnerReady.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
