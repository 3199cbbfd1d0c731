import type { IncomingMessage, ServerResponse } from "node:http";
import { credentialStatus } from "@agentlab/db";
import type { Services } from "../services";
import { sendJson } from "../http/respond";

/**
 * GET /api/agents/me with `Authorization: Bearer <agent credential>`: lets `agentlab-agent doctor`
 * check its credential without opening a socket (which would replace the running agent's).
 * Says "revoked" apart from "unknown", which tells only the holder of the credential that it existed.
 */
export async function handleWhoami(services: Services, req: IncomingMessage, res: ServerResponse) {
  if (req.method !== "GET") return sendJson(res, 405, { error: { code: "BAD_REQUEST", message: "GET only" } });
  const auth = req.headers.authorization ?? "";
  const token = auth.startsWith("Bearer ") ? auth.slice(7).trim() : "";
  const status = token ? await credentialStatus(services.db, token) : null;
  if (!status)
    return sendJson(res, 401, {
      status: "unknown",
      error: { code: "UNAUTHORIZED", message: "this credential was never issued by this server" },
    });
  if (status.revoked)
    return sendJson(res, 401, {
      status: "revoked",
      agentId: status.agentId,
      error: { code: "UNAUTHORIZED", message: "this agent was revoked by an admin" },
    });
  return sendJson(res, 200, { status: "ok", agentId: status.agentId, name: status.name });
}
