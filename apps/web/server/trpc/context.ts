import type { IncomingMessage } from "node:http";
import { principalByApiToken, principalBySession, type Principal } from "@agentlab/db";
import type { Services } from "../services";

export const SESSION_COOKIE = "agentlab_session";
export const CSRF_HEADER = "x-csrf-token";

export type Viewer = Principal & { via: "session" | "token"; csrfToken: string | null };

export type Context = Services & {
  viewer: Viewer | null;
  /** The CSRF header the request carried; checked against the session for cookie-authenticated mutations. */
  csrfHeader: string | null;
  ip: string;
};

export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
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

export async function createContext(services: Services, req: IncomingMessage): Promise<Context> {
  const csrf = req.headers[CSRF_HEADER];
  return {
    ...services,
    viewer: await resolveViewer(services, req.headers),
    csrfHeader: typeof csrf === "string" ? csrf : null,
    ip: req.socket.remoteAddress ?? "unknown",
  };
}
