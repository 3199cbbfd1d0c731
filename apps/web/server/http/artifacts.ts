import type { IncomingMessage, ServerResponse } from "node:http";
import { DomainError, UPLOAD_VIA_HEADER, UPLOAD_VIA_PRESIGNED, UploadPlanRequest } from "@agentlab/core";
import { agentByCredential, recordArtifactBlob } from "@agentlab/db";
import type { Services } from "../services";
import { resolveViewer } from "../auth/viewer";
import { readJsonBody, sendJson } from "./respond";

// Resumable, content-addressed uploads from agents (tus-like: HEAD for the offset, PATCH to append,
// POST .../complete to verify and publish); downloads for agents and signed-in users. With object
// storage (store.presigned) the bytes skip this process: GET redirects to a presigned URL, HEAD says
// `upload-via: presigned`, POST .../parts answers the multipart plan, and .../complete still verifies.
export async function handleArtifacts(services: Services, req: IncomingMessage, res: ServerResponse) {
  const m = /^\/api\/artifacts\/([a-f0-9]{64})(\/complete|\/parts)?$/.exec((req.url ?? "").split("?")[0] ?? "");
  if (!m?.[1]) throw new DomainError("NOT_FOUND", "no such artifact route");
  const sha = m[1];
  const auth = req.headers.authorization ?? "";
  const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
  const agent = token.startsWith("agt_") ? await agentByCredential(services.db, token) : undefined;
  const { artifacts } = services;

  if (req.method === "GET") {
    if (!agent && !(await resolveViewer(services, req)))
      throw new DomainError("UNAUTHORIZED", "sign in or present an agent credential");
    if (!(await artifacts.has(sha))) throw new DomainError("NOT_FOUND", "no such artifact");
    if (artifacts.presigned) {
      res.writeHead(302, { location: await artifacts.presigned.downloadUrl(sha), "cache-control": "no-store" });
      res.end();
      return;
    }
    const body = await artifacts.read(sha);
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      "cache-control": "private, max-age=31536000, immutable",
    });
    body.pipe(res);
    return;
  }
  if (!agent) throw new DomainError("UNAUTHORIZED", "only agents upload artifacts");
  if (req.method === "HEAD") {
    const complete = await artifacts.has(sha);
    res.writeHead(complete ? 200 : 404, {
      "upload-offset": String(complete ? 0 : await artifacts.partialSize(agent.id, sha)),
      "upload-complete": String(complete),
      ...(artifacts.presigned ? { [UPLOAD_VIA_HEADER]: UPLOAD_VIA_PRESIGNED } : {}),
    });
    res.end();
    return;
  }
  const { env } = services;
  const limits = {
    maxBytes: env.AGENTLAB_MAX_UPLOAD_BYTES,
    quotaBytes: env.AGENTLAB_UPLOAD_QUOTA_BYTES,
    maxOpen: env.AGENTLAB_MAX_OPEN_UPLOADS,
  };
  if (req.method === "POST" && m[2] === "/parts") {
    if (!artifacts.presigned) throw new DomainError("BAD_REQUEST", "this server takes uploads by PATCH");
    const parsed = UploadPlanRequest.safeParse(await readJsonBody(req, 4096));
    if (!parsed.success)
      throw new DomainError("BAD_REQUEST", `upload plan request: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    return sendJson(res, 200, await artifacts.presigned.plan(agent.id, sha, parsed.data.sizeBytes, limits));
  }
  if (req.method === "PATCH") {
    if (await artifacts.has(sha)) return sendJson(res, 200, { complete: true });
    const offset = Number(req.headers["upload-offset"] ?? "0");
    if (!Number.isInteger(offset) || offset < 0)
      throw new DomainError("BAD_REQUEST", "Upload-Offset must be a non-negative integer");
    const written = await artifacts.append(agent.id, sha, offset, req, limits);
    return sendJson(res, 200, { offset: written });
  }
  if (req.method === "POST" && m[2] === "/complete") {
    // Only the agent that uploaded the bytes can publish them (its own partial file).
    const size = (await artifacts.has(sha)) ? await artifacts.size(sha) : await artifacts.complete(agent.id, sha);
    await recordArtifactBlob(services.db, sha, size);
    return sendJson(res, 200, { sha256: sha, sizeBytes: size });
  }
  throw new DomainError("BAD_REQUEST", `method ${req.method ?? "?"} not allowed here`);
}
