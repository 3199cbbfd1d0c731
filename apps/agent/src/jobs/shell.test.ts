import { describe, expect, it } from "vitest";
import pino from "pino";
import { jobHandlers } from "./index";
import { SHELL_REFUSED, shellJobsAllowed } from "./shell";
import type { JobContext } from "./types";

describe("shell job opt-in", () => {
  it("needs both the flag and the env", () => {
    expect(shellJobsAllowed(true, "1")).toBe(true);
    for (const [flag, env] of [
      [false, "1"],
      [true, "0"],
      [true, undefined],
      [undefined, "1"],
      [false, "0"],
    ] as const)
      expect(shellJobsAllowed(flag, env)).toBe(false);
  });

  it("an agent without the opt-in refuses a shell job without running it; with it, the command runs", async () => {
    const ctx = (argv: string[]): JobContext => ({
      jobId: "j",
      attemptId: "a",
      earlierArtifacts: [],
      attempt: 1,
      type: "shell",
      payload: { argv },
      signal: new AbortController().signal,
      abortReason: () => null,
      log: pino({ level: "silent" }),
      emitLog: (_s, data) => void out.push(data),
      progress: () => {},
      uploadArtifact: async () => "",
      workDir: "/tmp",
      agent: {
        serverUrl: "",
        credential: "",
        stateDir: "/tmp",
        python: null,
        sandboxBackend: "process",
        sandboxOk: false,
      },
    });
    const out: string[] = [];
    const refused = await jobHandlers({ graceMs: 100 }).shell?.(ctx(["echo", "RAN-IT"]));
    expect(refused).toEqual({ reason: "user_error", error: SHELL_REFUSED });
    expect(out.join("")).not.toContain("RAN-IT");
    // Positive control: the same job on an opted-in agent runs.
    const ran = await jobHandlers({ graceMs: 100, allowShellJobs: true }).shell?.(ctx(["echo", "RAN-IT"]));
    expect(ran).toMatchObject({ reason: "succeeded" });
    expect(out.join("")).toContain("RAN-IT");
  });
});
