import type { IncomingMessage, ServerResponse } from "node:http";
import { DomainError, PoolName, maybeGunzip, type ImportResponse } from "@agentlab/core";
import { importPool } from "@agentlab/db";
import type { Services } from "../services";
import { CSRF_HEADER, resolveViewer } from "../auth/viewer";
import { sendJson } from "./respond";
import { workerImportPreparer } from "../imports/worker-preparer";

// POST /api/tasks/import?pool=NAME[&description=...]: the raw bytes of a .jsonl or .jsonl.gz file
// as the body (the upload page and the CLI stream it). All-or-nothing: a 400 lists every problem.
export const IMPORT_MAX_BYTES = 256 * 1024 * 1024;
const MAX_LISTED_PROBLEMS = 1000;

export async function handleTaskImport(services: Services, req: IncomingMessage, res: ServerResponse) {
  if (req.method !== "POST") throw new DomainError("BAD_REQUEST", `method ${req.method ?? "?"} not allowed here`);
  const viewer = await resolveViewer(services, req);
  if (!viewer) throw new DomainError("UNAUTHORIZED", "sign in or present an API token");
  if (viewer.role === "viewer") throw new DomainError("FORBIDDEN", "requires the member role");
  if (viewer.via === "session" && req.headers[CSRF_HEADER] !== viewer.csrfToken)
    throw new DomainError("FORBIDDEN", "missing or wrong CSRF token");

  const url = new URL(req.url ?? "/", "http://local");
  const name = PoolName.safeParse(url.searchParams.get("pool") ?? "");
  if (!name.success) throw new DomainError("BAD_REQUEST", name.error.issues[0]?.message ?? "bad pool name");
  const max = Math.min(services.env.AGENTLAB_MAX_UPLOAD_BYTES, IMPORT_MAX_BYTES);
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > max) throw new DomainError("PAYLOAD_TOO_LARGE", `task files are limited to ${max} bytes`);

  const log = services.log.child({ route: "tasks.import", pool: name.data, userId: viewer.userId });
  const started = Date.now();
  // Both the upload and what it inflates to are capped, so a gzip bomb stops early too.
  const body = capped(maybeGunzip(capped(req, max, "upload")), max * 8, "decompressed file");
  const result = await importPool(services.db, {
    name: name.data,
    lines: body,
    description: url.searchParams.get("description") ?? undefined,
    createdBy: viewer.userId,
    // Parsing and proposals off the event loop: agents' heartbeats are answered through the import.
    preparer: workerImportPreparer(),
  });
  if (!result.ok) {
    log.info({ problems: result.problems.length }, "task import rejected");
    const out: ImportResponse = {
      ok: false,
      problemCount: result.problems.length,
      problems: result.problems.slice(0, MAX_LISTED_PROBLEMS),
    };
    return sendJson(res, 400, {
      ...out,
      error: {
        code: "BAD_REQUEST",
        message: `the file has ${result.problems.length} problem(s); nothing was imported`,
      },
    });
  }
  log.info({ imported: result.imported, ms: Date.now() - started }, "tasks imported");
  sendJson(res, 200, result satisfies ImportResponse);
}

async function* capped(src: AsyncIterable<Uint8Array>, max: number, what: string): AsyncGenerator<Uint8Array> {
  let seen = 0;
  for await (const chunk of src) {
    seen += chunk.length;
    if (seen > max) throw new DomainError("PAYLOAD_TOO_LARGE", `the ${what} exceeds ${max} bytes`);
    yield chunk;
  }
}
