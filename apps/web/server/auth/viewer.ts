import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { principalByApiToken, principalBySession, type Principal } from "@agentlab/db";
import type { Services } from "../services";
import { cookieName, isSecureRequest } from "./cookies";

// Who is asking, read from the request's bearer token or session cookie. It lives in auth (below
// trpc) because the HTTP handlers outside tRPC resolve the viewer the same way.
export const SESSION_COOKIE = "agentlab_session";
export const CSRF_HEADER = "x-csrf-token";

export type Viewer = Principal & { via: "session" | "token"; csrfToken: string | null };

export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join("="));
    } catch {
      return null; // a malformed cookie is no cookie, not a server error
    }
  }
  return null;
}

/** Whether this request's cookies are the `__Host-` ones (cookies.ts cookieName). */
export const secureRequest = (services: Pick<Services, "env">, req: Pick<IncomingMessage, "socket">): boolean =>
  isSecureRequest(Boolean((req.socket as Partial<TLSSocket>).encrypted), services.env.AGENTLAB_PUBLIC_URL);

/** The session cookie's value; over https only the `__Host-` one counts. */
export const sessionCookieOf = (services: Pick<Services, "env">, req: Pick<IncomingMessage, "headers" | "socket">) =>
  readCookie(req.headers.cookie, cookieName(SESSION_COOKIE, secureRequest(services, req)));

export async function resolveViewer(
  services: Services,
  req: Pick<IncomingMessage, "headers" | "socket">,
): Promise<Viewer | null> {
  const headers = req.headers;
  const auth = headers.authorization;
  if (auth?.startsWith("Bearer ")) {
    const p = await principalByApiToken(services.db, auth.slice("Bearer ".length).trim());
    return p ? { ...p, via: "token", csrfToken: null } : null;
  }
  const cookie = sessionCookieOf(services, req);
  if (cookie) {
    const p = await principalBySession(services.db, cookie);
    return p ? { ...p, via: "session" } : null;
  }
  return null;
}
