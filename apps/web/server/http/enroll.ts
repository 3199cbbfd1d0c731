import type { IncomingMessage, ServerResponse } from "node:http";
import { DomainError, EnrollRequest, unstorableTextAt } from "@agentlab/core";
import { enrollAgent } from "@agentlab/db";
import type { Services } from "../services";
import { readJsonBody, sendJson } from "./respond";

// POST /api/agents/enroll: the one-time enrollment token is the only authentication.
export async function handleEnroll(services: Services, req: IncomingMessage, res: ServerResponse) {
  if (req.method !== "POST") throw new DomainError("BAD_REQUEST", "use POST");
  const parsed = EnrollRequest.safeParse(await readJsonBody(req, 16 * 1024));
  if (!parsed.success) throw new DomainError("BAD_REQUEST", "body must be {token, name?}");
  const unstorable = unstorableTextAt(parsed.data);
  if (unstorable) throw new DomainError("BAD_REQUEST", `${unstorable.path.join(".")}: ${unstorable.message}`);
  const out = await enrollAgent(services.db, parsed.data.token, parsed.data.name);
  services.log.info({ agentId: out.agentId }, "agent enrolled");
  sendJson(res, 200, out);
}
