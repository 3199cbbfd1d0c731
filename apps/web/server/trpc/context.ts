import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { principalByApiToken, principalBySession, type Principal } from "@agentlab/db";
import type { Services } from "../services";
import { isSecureRequest, serializeCookie, type CookieOptions } from "../auth/cookies";
import { clientIp, trustedProxiesOf } from "../auth/client-ip";

export const SESSION_COOKIE = "agentlab_session";
export const CSRF_HEADER = "x-csrf-token";

export type Viewer = Principal & { via: "session" | "token"; csrfToken: string | null };

export type Context = Services & {
  viewer: Viewer | null;
  /** The CSRF header the request carried; checked against the session for cookie-authenticated mutations. */
  csrfHeader: string | null;
  ip: string;
  /** The raw session cookie, so logout can end exactly this session. */
  sessionToken: string | null;
  /** Adds a Set-Cookie header to the response; `secure` defaults to whether the request used TLS. */
  setCookie(name: string, value: string, opts: Omit<CookieOptions, "secure"> & { secure?: boolean }): void;
};

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

export async function createContext(services: Services, req: IncomingMessage, res?: ServerResponse): Promise<Context> {
  const csrf = req.headers[CSRF_HEADER];
  const secure = isSecureRequest(
    Boolean((req.socket as Partial<TLSSocket>).encrypted),
    services.env.AGENTLAB_PUBLIC_URL,
  );
  return {
    ...services,
    viewer: await resolveViewer(services, req.headers),
    csrfHeader: typeof csrf === "string" ? csrf : null,
    ip: clientIp(req.socket.remoteAddress, req.headers["x-forwarded-for"], trustedProxiesOf(services.env)),
    sessionToken: readCookie(req.headers.cookie, SESSION_COOKIE),
    setCookie(name, value, opts) {
      if (!res || res.headersSent) throw new Error("cookies can only be set while answering an HTTP request");
      res.appendHeader("set-cookie", serializeCookie(name, value, { secure, ...opts }));
    },
  };
}
