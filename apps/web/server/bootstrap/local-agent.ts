import { spawn, type ChildProcess } from "node:child_process";
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
): Promise<ChildProcess> {
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
  const child = spawn(process.execPath, [AGENT_BIN, "run"], {
    // Never opted in to shell jobs: this agent runs on the control-plane host, next to its secrets.
    env: {
      ...extraEnv,
      NODE_ENV: "production",
      AGENTLAB_AGENT_HOME: home,
      LOG_LEVEL: services.env.LOG_LEVEL,
      AGENTLAB_ALLOW_SHELL_JOBS: "0",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  child.on("exit", (code, signal) => log.warn({ code, signal }, "local agent exited"));
  return child;
}
