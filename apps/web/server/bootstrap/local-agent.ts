import { spawn } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { AgentConfig } from "@agentlab/core";
import { agentByCredential, createEnrollmentToken, enrollAgent } from "@agentlab/db";
import type { Services } from "../services";

const AGENT_BIN = fileURLToPath(new URL("../../../agent/bin/agentlab-agent.mjs", import.meta.url));

/**
 * `npm start` comes with one agent on this machine, enrolled through the same one-time-token path
 * as any other box, so a new user can run jobs at once. Its credential is reused across restarts.
 */
export async function startLocalAgent(
  services: Services,
  serverUrl: string,
  extraEnv: Record<string, string>,
): Promise<LocalAgent> {
  const home = resolve(services.env.AGENTLAB_DATA_DIR, "local-agent");
  const path = join(home, "agent.json");
  const existing = await readFile(path, "utf8").then(
    (raw) => AgentConfig.safeParse(JSON.parse(raw)),
    () => null,
  );
  const usable = existing?.success && (await agentByCredential(services.db, existing.data.credential));
  if (!usable) {
    const { token } = await createEnrollmentToken(services.db, { name: "local", labels: ["local"], ttlS: 60 });
    const { agentId, credential } = await enrollAgent(services.db, token, "local");
    await mkdir(home, { recursive: true, mode: 0o700 });
    await writeFile(path, JSON.stringify({ server: serverUrl, agentId, credential } satisfies AgentConfig, null, 2), {
      mode: 0o600,
    });
    await chmod(path, 0o600);
  } else if (existing.data.server !== serverUrl) {
    await writeFile(path, JSON.stringify({ ...existing.data, server: serverUrl }, null, 2), { mode: 0o600 });
  }
  const log = services.log.child({ component: "local-agent" });
  return superviseLocalAgent(
    () =>
      spawn(process.execPath, [AGENT_BIN, "run"], {
        // Never opted in to shell jobs: this agent runs on the control-plane host, next to its secrets.
        env: {
          ...extraEnv,
          NODE_ENV: "production",
          AGENTLAB_AGENT_HOME: home,
          LOG_LEVEL: services.env.LOG_LEVEL,
          AGENTLAB_ALLOW_SHELL_JOBS: "0",
        },
        stdio: ["ignore", "inherit", "inherit"],
      }),
    log,
  );
}

export type LocalAgentState =
  | { state: "off" }
  | { state: "running"; restarts: number }
  | { state: "restarting"; restarts: number; retryInS: number };

// One local agent per server process: the health route reads this so the dashboard can say
// "restarting" instead of advising `npm start` to a user whose `npm start` is still running.
let current:
  | { state: "off" }
  | { state: "running"; restarts: number }
  | { state: "restarting"; restarts: number; retryAt: number } = {
  state: "off",
};
export const localAgentState = (): LocalAgentState =>
  current.state === "restarting"
    ? {
        state: "restarting",
        restarts: current.restarts,
        retryInS: Math.max(0, Math.ceil((current.retryAt - Date.now()) / 1000)),
      }
    : current;

export type LocalAgent = {
  stop(): Promise<void>;
  /** Stops the running agent (SIGTERM: its jobs are handed back) and starts it again at once; false when none runs. */
  restart(): boolean;
};

// The restart an admin asks for from the Agents page reaches this process's one supervisor.
let supervisor: LocalAgent | null = null;
export const restartLocalAgent = (): boolean => supervisor?.restart() ?? false;

/** The part of a ChildProcess the supervisor uses (a test hands it a stand-in). */
export type AgentProcess = {
  pid?: number | undefined;
  exitCode: number | null;
  signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): boolean;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
};

const MIN_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
// A run this long counts as healthy: the next death starts the backoff from the bottom again.
const HEALTHY_RUN_MS = 60_000;

/**
 * Restarts the agent whenever it dies (a crash must not leave the only agent of a new user's
 * install down), with exponential backoff so a process that dies at start does not spin.
 */
export function superviseLocalAgent(
  start: () => AgentProcess,
  log: Pick<Services["log"], "info" | "warn">,
  backoff = { minMs: MIN_BACKOFF_MS, maxMs: MAX_BACKOFF_MS, healthyMs: HEALTHY_RUN_MS },
): LocalAgent {
  let stopping = false;
  let child: AgentProcess | null = null;
  let timer: NodeJS.Timeout | null = null;
  let restarts = 0;
  let delay = backoff.minMs;
  let asked = false;
  const launch = () => {
    timer = null;
    const startedAt = Date.now();
    const proc = start();
    child = proc;
    current = { state: "running", restarts };
    log.info({ pid: proc.pid, restarts }, "local agent started");
    proc.on("error", (err) => log.warn({ err: err.message }, "local agent could not start"));
    proc.once("exit", (code, signal) => {
      child = null;
      if (stopping) return;
      restarts += 1;
      if (asked) {
        // Asked for: no backoff, and the next crash still starts the backoff where it was.
        asked = false;
        current = { state: "restarting", restarts, retryAt: Date.now() };
        log.info({ code, signal, restarts }, "local agent restarted on request");
        timer = setTimeout(launch, 0);
        return;
      }
      if (Date.now() - startedAt >= backoff.healthyMs) delay = backoff.minMs;
      current = { state: "restarting", restarts, retryAt: Date.now() + delay };
      log.warn({ code, signal, restartInMs: delay, restarts }, "local agent exited; restarting");
      timer = setTimeout(launch, delay);
      delay = Math.min(delay * 2, backoff.maxMs);
    });
  };
  launch();
  const self: LocalAgent = {
    restart() {
      const proc = child;
      if (stopping || !proc || proc.exitCode !== null || proc.signalCode !== null) return false;
      asked = true;
      proc.kill("SIGTERM");
      return true;
    },
    async stop() {
      stopping = true;
      if (supervisor === self) supervisor = null;
      if (timer) clearTimeout(timer);
      current = { state: "off" };
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      // The agent hands its running jobs back on SIGTERM; one that hangs is not waited on forever.
      const hard = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(hard);
    },
  };
  supervisor = self;
  return self;
}
