import type { IncomingMessage, ServerResponse } from "node:http";
import type { Services } from "../services";
import { cookieName, serializeCookie, type SetCookie } from "../auth/cookies";
import { clientIp, trustedProxiesOf } from "../auth/client-ip";
import { CSRF_HEADER, resolveViewer, secureRequest, sessionCookieOf, type Viewer } from "../auth/viewer";

export type Context = Services & {
  viewer: Viewer | null;
  /** The CSRF header the request carried; checked against the session for cookie-authenticated mutations. */
  csrfHeader: string | null;
  ip: string;
  /** The raw session cookie, so logout can end exactly this session. */
  sessionToken: string | null;
  setCookie: SetCookie;
};

export async function createContext(services: Services, req: IncomingMessage, res?: ServerResponse): Promise<Context> {
  const csrf = req.headers[CSRF_HEADER];
  const secure = secureRequest(services, req);
  return {
    ...services,
    viewer: await resolveViewer(services, req),
    csrfHeader: typeof csrf === "string" ? csrf : null,
    ip: clientIp(req.socket.remoteAddress, req.headers["x-forwarded-for"], trustedProxiesOf(services.env)),
    sessionToken: sessionCookieOf(services, req),
    // Names are given bare; over https they get the __Host- prefix here (cookies.ts cookieName).
    setCookie(name, value, opts) {
      if (!res || res.headersSent) throw new Error("cookies can only be set while answering an HTTP request");
      res.appendHeader("set-cookie", serializeCookie(cookieName(name, secure), value, { secure, ...opts }));
    },
  };
}
