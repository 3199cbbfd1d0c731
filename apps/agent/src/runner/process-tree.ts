import { spawn } from "node:child_process";
import { guardGroup, killGroup } from "./group";

export type TreeResult = {
  exitCode: number | null;
  signal: string | null;
  outputTruncated: boolean;
  spawnError: string | null;
};

export type TreeOptions = {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  signal: AbortSignal;
  graceMs: number;
  maxOutputBytes: number;
  onOutput(stream: "stdout" | "stderr", data: string): void;
};

/**
 * Runs argv as the leader of a new process group, so that cancel reaches the whole tree:
 * SIGTERM to the group, then SIGKILL after the grace period. The group is always SIGKILLed at
 * the end so no child outlives the job (processes that call setsid escape; the grading sandbox
 * covers untrusted code).
 */
/** How long a finished job waits for its output pipes to drain. */
const PIPE_DRAIN_MS = 2000;

export function runProcessTree(opts: TreeOptions): Promise<TreeResult> {
  return new Promise((resolve) => {
    const [cmd, ...args] = opts.argv;
    if (!cmd) return resolve({ exitCode: null, signal: null, outputTruncated: false, spawnError: "empty argv" });
    let outputBytes = 0;
    let truncated = false;
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const guard = guardGroup(child, opts.signal, opts.graceMs);

    const take = (stream: "stdout" | "stderr") => (buf: Buffer) => {
      if (truncated) return;
      outputBytes += buf.length;
      if (outputBytes > opts.maxOutputBytes) {
        truncated = true;
        opts.onOutput("stderr", `\n[agentlab] output exceeded ${opts.maxOutputBytes} bytes; the rest is dropped\n`);
        return;
      }
      opts.onOutput(stream, buf.toString("utf8"));
    };
    child.stdout.on("data", take("stdout"));
    child.stderr.on("data", take("stderr"));
    child.once("error", (err) => {
      guard.dispose();
      resolve({ exitCode: null, signal: null, outputTruncated: truncated, spawnError: err.message });
    });
    // Output still in the pipes when the process exits must reach the log before the result: wait
    // for both streams to end, but not for a grandchild (escaped with setsid) holding them open.
    const drained = Promise.all(
      [child.stdout, child.stderr].map((st) => new Promise((done) => st.once("close", done))),
    );
    child.once("exit", (code, sig) => {
      guard.dispose();
      killGroup(child, "SIGKILL");
      const bound = new Promise((done) => setTimeout(done, PIPE_DRAIN_MS));
      void Promise.race([drained, bound]).then(() =>
        resolve({ exitCode: code, signal: sig, outputTruncated: truncated, spawnError: null }),
      );
    });
  });
}
