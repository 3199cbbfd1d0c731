import { TRPCClientError } from "@trpc/client";
import {
  issuesByField,
  parseSerializedIssues,
  summarizeFieldIssues,
  type FieldIssues,
} from "@agentlab/core/validation";

// The one formatter for every error a page (or the CLI) shows: field errors by dotted path,
// HTTP failures named for what they are, and never the raw JSON of a zod issue list.

/** Thrown by `namedFetch` for an answer that is not tRPC's JSON (a proxy page, Node's bare 431, …). */
export class HttpStatusError extends Error {
  readonly status: number;
  constructor(status: number) {
    super(httpStatusMessage(status));
    this.name = "HttpStatusError";
    this.status = status;
  }
}

/** Thrown by `namedFetch` when no answer came back at all. */
export class NetworkError extends Error {
  constructor(readonly target: string) {
    super(`cannot reach ${target} (network error: the server is down, restarting or unreachable)`);
    this.name = "NetworkError";
  }
}

export function httpStatusMessage(status: number): string {
  if (status === 431)
    return "HTTP 431: the request headers are too large (usually too many or too big cookies for this site; clear them and sign in again)";
  if (status === 413) return "HTTP 413: the request body is too large for the server";
  if (status === 429) return "HTTP 429: too many requests; wait a moment and try again";
  if (status === 401) return "HTTP 401: not signed in, or the token was rejected";
  if (status === 403) return "HTTP 403: not allowed";
  if (status === 404) return "HTTP 404: not found";
  if (status === 502 || status === 503 || status === 504)
    return `HTTP ${status}: the server is unavailable (a proxy got no answer from it)`;
  if (status >= 500) return `HTTP ${status}: the server failed; its log has the details`;
  return `HTTP ${status}`;
}

/** fetch that turns "no answer" and non-JSON error answers into the errors above (tRPC keeps them as `cause`). */
export async function namedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(input, init);
  } catch (err) {
    if (init?.signal?.aborted) throw err;
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    throw new NetworkError(originOf(url));
  }
  if (!res.ok && !(res.headers.get("content-type") ?? "").includes("json")) throw new HttpStatusError(res.status);
  return res;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the server";
  }
}

export type DescribedError = {
  /** tRPC's code (BAD_REQUEST, …) or NETWORK / HTTP_<status>; null for plain errors. */
  code: string | null;
  status: number | null;
  message: string;
  /** Messages by dotted field path, e.g. `training.epochs`. */
  fields: Record<string, string[]>;
  /** Errors about the input as a whole. */
  form: string[];
};

const empty: FieldIssues = { formErrors: [], fieldErrors: {} };

export function describeError(err: unknown): DescribedError {
  if (err instanceof TRPCClientError) {
    const cause: unknown = err.cause;
    if (cause instanceof HttpStatusError)
      return { code: `HTTP_${cause.status}`, status: cause.status, message: cause.message, fields: {}, form: [] };
    if (cause instanceof NetworkError)
      return { code: "NETWORK", status: null, message: cause.message, fields: {}, form: [] };
    const data = (err.data ?? {}) as { code?: unknown; httpStatus?: unknown; zodError?: Partial<FieldIssues> | null };
    const status = typeof data.httpStatus === "number" ? data.httpStatus : null;
    const code = typeof data.code === "string" ? data.code : null;
    const serialized = parseSerializedIssues(err.message);
    const issues = data.zodError ? { ...empty, ...data.zodError } : serialized ? issuesByField(serialized) : null;
    if (issues)
      return {
        code,
        status,
        message: summarizeFieldIssues(issues),
        fields: issues.fieldErrors,
        form: issues.formErrors,
      };
    const message =
      status !== null && status >= 500
        ? `${httpStatusMessage(status)} (${err.message || "internal error"})`
        : err.message || (status ? httpStatusMessage(status) : "request failed");
    return { code, status, message, fields: {}, form: [] };
  }
  if (err instanceof HttpStatusError)
    return { code: `HTTP_${err.status}`, status: err.status, message: err.message, fields: {}, form: [] };
  if (err instanceof Error) {
    const serialized = parseSerializedIssues(err.message);
    if (serialized) {
      const issues = issuesByField(serialized);
      return {
        code: null,
        status: null,
        message: summarizeFieldIssues(issues),
        fields: issues.fieldErrors,
        form: issues.formErrors,
      };
    }
    return { code: null, status: null, message: err.message, fields: {}, form: [] };
  }
  return { code: null, status: null, message: String(err), fields: {}, form: [] };
}

/** The messages for one form field (its dotted path, or any path below it); null when it has none. */
export function fieldError(err: unknown, path: string): string | null {
  if (!err) return null;
  const { fields } = describeError(err);
  const msgs = Object.entries(fields)
    .filter(([k]) => k === path || k.startsWith(`${path}.`))
    .flatMap(([k, m]) => (k === path ? m : m.map((x) => `${k.slice(path.length + 1)}: ${x}`)));
  return msgs.length ? msgs.join("; ") : null;
}
