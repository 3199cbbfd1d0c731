import type { ServerResponse } from "node:http";
import { DomainError, isDomainError, type DomainErrorCode } from "@agentlab/core";

export function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

const httpStatus: Record<DomainErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
};

/** Plain-HTTP routes (health, artifacts, uploads) report errors the same way tRPC does: 4xx kept, 5xx masked. */
export function sendError(res: ServerResponse, err: unknown) {
  if (isDomainError(err) && err.code !== "INTERNAL")
    return sendJson(res, httpStatus[err.code], { error: { code: err.code, message: err.message } });
  return sendJson(res, 500, { error: { code: "INTERNAL", message: "internal error" } });
}

/** Reads a JSON body up to `maxBytes`; larger bodies are refused before they are buffered. */
export async function readJsonBody(req: import("node:http").IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new DomainError("PAYLOAD_TOO_LARGE", `body exceeds ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new DomainError("BAD_REQUEST", "body is not valid JSON");
  }
}
