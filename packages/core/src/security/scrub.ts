// Provider errors are stored (collection stopReason) and logged; a provider that echoes the
// request (some proxies put the Authorization header in a 401 body) would otherwise write the API
// key there. Every provider error passes through `scrubSecrets` before it is stored or logged.

import { REDACTED, scrubKnown } from "./scrub-known";

// Values after an Authorization-like name: `Authorization: Bearer x`, `"api-key":"x"`, `x-api-key=x`.
const HEADER_RE =
  /((?:proxy-)?authorization|x-api-key|api[-_]?key|access[-_]?token|secret|password|cookie)(["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token)\s+)?[^\s"',;}]+/gi;
const BEARER_RE = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
// Token shapes of the common providers: sk-…, sk-proj-…, pat_…, agt_…, hf_…, gsk_…, xai-…, AIza…
const TOKEN_RE =
  /\b(?:sk|rk|pk)-[A-Za-z0-9_-]{8,}|\b(?:pat|agt|hf|gsk|ghp|gho|xoxb)_[A-Za-z0-9_-]{8,}|\bxai-[A-Za-z0-9_-]{8,}|\bAIza[A-Za-z0-9_-]{20,}/g;

/**
 * Removes known secret values in any form (scrubKnown: any case, escaped, hex, base64, split or
 * in pieces), Authorization-like header values, bearer tokens and `sk-…`-like tokens from a
 * message. Known values shorter than 4 characters are ignored (they would blank ordinary words).
 */
export function scrubSecrets(text: string, known: readonly (string | null | undefined)[] = []): string {
  return scrubKnown(text, known)
    .replace(HEADER_RE, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`)
    .replace(BEARER_RE, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(TOKEN_RE, REDACTED);
}

/** The message of any thrown value, scrubbed: for logs and stored reasons. */
export const scrubbedMessage = (err: unknown, known: readonly (string | null | undefined)[] = []): string =>
  scrubSecrets(err instanceof Error ? err.message : String(err), known);
