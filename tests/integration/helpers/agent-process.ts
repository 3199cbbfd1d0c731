import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { enrollTestAgent, type TestServer } from "./server";

export const AGENT_BIN = fileURLToPath(new URL("../../../apps/agent/bin/agentlab-agent.mjs", import.meta.url));

/** An enrolled agent's home directory (agent.json written as `enroll` would). */
export async function agentHome(server: TestServer, name: string): Promise<{ agentId: string; home: string }> {
  const { agentId, credential } = await enrollTestAgent(server.db, name);
  const home = await mkdtemp(join(tmpdir(), `agentlab-proc-${name}-`));
  await writeFile(join(home, "agent.json"), JSON.stringify({ server: server.url, agentId, credential }), {
    mode: 0o600,
  });
  return { agentId, home };
}

export type AgentProcess = {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; at: number }>;
};

/** `agentlab-agent <args>` as a real process; stdout and stderr are captured unless `inherit`. */
export function spawnAgent(
  home: string,
  args: string[],
  env: Record<string, string> = {},
  opts: { inherit?: boolean } = {},
): AgentProcess {
  const child = spawn(process.execPath, [AGENT_BIN, ...args], {
    env: { PATH: process.env.PATH, AGENTLAB_AGENT_HOME: home, LOG_LEVEL: "warn", ...env },
    stdio: opts.inherit ? "inherit" : ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once("exit", (code) => resolve({ code, at: Date.now() })),
  );
  return { child, output: () => out, exited };
}

/** A process agent that takes shell jobs (both opt-ins given), with the process sandbox backend. */
export async function spawnShellAgent(server: TestServer, name: string, env: Record<string, string> = {}) {
  const { agentId, home } = await agentHome(server, name);
  const proc = spawnAgent(
    home,
    ["run", "--allow-shell-jobs"],
    { AGENTLAB_SANDBOX: "process", AGENTLAB_ALLOW_SHELL_JOBS: "1", ...env },
    { inherit: true },
  );
  return { agentId, home, ...proc };
}
