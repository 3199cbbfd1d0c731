import { parseArgs } from "node:util";
import { hostname } from "node:os";
import { EnrollReply } from "@agentlab/core";
import { saveConfig } from "../config";
import type { AgentEnv } from "../env";

/** Exchanges a one-time enrollment token for this box's credential (stored 0600). */
export async function enrollCommand(argv: string[], env: AgentEnv): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { server: { type: "string" }, token: { type: "string" }, name: { type: "string" } },
  });
  const server = values.server ?? env.AGENTLAB_SERVER;
  if (!server || !values.token) {
    console.error("usage: agentlab-agent enroll --server URL --token TOKEN [--name NAME]");
    return 2;
  }
  const res = await fetch(new URL("/api/agents/enroll", server), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: values.token, name: values.name ?? hostname() }),
  });
  const body: unknown = await res.json().catch(() => ({}));
  if (!res.ok) {
    const msg = (body as { error?: { message?: string } }).error?.message ?? res.statusText;
    console.error(`enrollment refused: ${msg}`);
    return 1;
  }
  const { agentId, credential } = EnrollReply.parse(body);
  const path = await saveConfig(env.AGENTLAB_AGENT_HOME, { server, agentId, credential });
  console.log(`enrolled as agent ${agentId}; credential stored in ${path}`);
  return 0;
}
