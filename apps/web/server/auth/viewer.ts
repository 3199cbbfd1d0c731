import type { IncomingMessage } from "node:http";
import { principalByApiToken, principalBySession, type Principal } from "@agentlab/db";
import type { Services } from "../services";

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

export async function resolveViewer(services: Services, headers: IncomingMessage["headers"]): Promise<Viewer | null> {
  const auth = headers.authorization;
  if (auth?.startsWith("Bearer ")) {
    const p = await principalByApiToken(services.db, auth.slice("Bearer ".length).trim());
    return p ? { ...p, via: "token", csrfToken: null } : null;
  }
  const cookie = readCookie(headers.cookie, SESSION_COOKIE);
  if (cookie) {
    const p = await principalBySession(services.db, cookie);
    return p ? { ...p, via: "session" } : null;
  }
  return null;
}
