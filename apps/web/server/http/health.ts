import type { ServerResponse } from "node:http";
import { countOnlineAgents, ping } from "@agentlab/db";
import { localAgentState } from "../bootstrap/local-agent";
import type { Services } from "../services";
import { sendJson } from "./respond";

export async function health(services: Services, res: ServerResponse) {
  const dbOk = await ping(services.db).catch(() => false);
  const agentsOnline = dbOk ? await countOnlineAgents(services.db) : 0;
  sendJson(res, dbOk ? 200 : 503, {
    status: dbOk ? "ok" : "degraded",
    database: dbOk ? "ok" : "unreachable",
    agentsOnline,
    // What the dashboard's no-agent advice depends on: a local agent that is restarting needs no action.
    localAgent: localAgentState(),
  });
}
