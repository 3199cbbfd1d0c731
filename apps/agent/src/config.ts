import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AgentConfig } from "@agentlab/core";

// The agent's identity on this box: written once by `enroll`, readable by its owner only.

export const configPath = (home: string) => join(home, "agent.json");

export async function saveConfig(home: string, config: AgentConfig): Promise<string> {
  await mkdir(home, { recursive: true, mode: 0o700 });
  const path = configPath(home);
  await writeFile(path, JSON.stringify(config, null, 2), { mode: 0o600 });
  await chmod(path, 0o600);
  return path;
}

export async function loadConfig(home: string): Promise<AgentConfig> {
  const path = configPath(home);
  const raw = await readFile(path, "utf8").catch(() => {
    throw new Error(`no agent credential at ${path}: run \`agentlab-agent enroll --server URL --token T\` first`);
  });
  return AgentConfig.parse(JSON.parse(raw));
}
