// Cookie helpers for the browser. The CSRF token sits in a non-HttpOnly cookie set at sign-in so
// that this code can echo it in a header; the session cookie itself stays HttpOnly.
export const CSRF_COOKIE = "agentlab_csrf";
export const CSRF_HEADER = "x-csrf-token";

/** The value of `name` in a `document.cookie`-style string, or null. */
export function readCookie(cookieHeader: string, name: string): string | null {
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return null;
}

/**
 * The CSRF token this page echoes: over https the server names its cookies `__Host-…` (a page on
 * another port of this host cannot set those); over plain http the bare name.
 */
export const csrfTokenOf = (cookieHeader: string): string | null =>
  readCookie(cookieHeader, `__Host-${CSRF_COOKIE}`) ?? readCookie(cookieHeader, CSRF_COOKIE);

/** Where a 401 sends the user: the login page, remembering the page they were on. */
export function loginUrl(pathname: string, search: string): string {
  return `/login?next=${encodeURIComponent(pathname + search)}`;
}

// Pages that must stay reachable while signed out (or that do their own auth), so a 401 there
// never bounces the user away.
const PUBLIC_PREFIXES = ["/login", "/setup", "/share"];
export const isPublicPath = (pathname: string): boolean =>
  PUBLIC_PREFIXES.some((p) => pathname === p || pathname.startsWith(`${p}/`) || pathname.startsWith(`${p}?`));
