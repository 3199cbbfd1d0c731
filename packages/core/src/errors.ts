// The one error type domain code throws. The web app maps `code` to a tRPC/HTTP status in one place.
export const domainErrorCodes = [
  "BAD_REQUEST", // input is well-formed but not acceptable (e.g. an invalid task file)
  "UNAUTHORIZED",
  "FORBIDDEN",
  "NOT_FOUND",
  "CONFLICT", // state forbids it: frozen split, test already evaluated, stale attempt
  "PRECONDITION_FAILED", // a protocol or invariant check refused the action
  "PAYLOAD_TOO_LARGE",
  "TOO_MANY_REQUESTS",
  "INTERNAL",
] as const;
export type DomainErrorCode = (typeof domainErrorCodes)[number];

export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly details: unknown;
  constructor(code: DomainErrorCode, message: string, details?: unknown) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.details = details;
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
