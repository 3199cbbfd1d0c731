// Cookie serialization for the session and CSRF cookies (RFC 6265 attributes only).
export type CookieOptions = {
  httpOnly: boolean;
  /** Seconds; 0 deletes the cookie. */
  maxAgeS: number;
  secure: boolean;
  sameSite?: "Lax" | "Strict";
  path?: string;
};

const TOKEN_CHARS = /^[A-Za-z0-9._~-]*$/;

/** Adds a Set-Cookie header to the response; `secure` defaults to whether the request used TLS. */
export type SetCookie = (
  name: string,
  value: string,
  opts: Omit<CookieOptions, "secure"> & { secure?: boolean },
) => void;

export function serializeCookie(name: string, value: string, opts: CookieOptions): string {
  // Our values are base64url tokens; anything else would need quoting and is a bug.
  if (!TOKEN_CHARS.test(name) || !TOKEN_CHARS.test(value))
    throw new Error(`refusing to set a cookie with unsafe characters: ${name}`);
  const parts = [
    `${name}=${value}`,
    `Path=${opts.path ?? "/"}`,
    `Max-Age=${Math.max(0, Math.floor(opts.maxAgeS))}`,
    `SameSite=${opts.sameSite ?? "Lax"}`,
  ];
  if (opts.maxAgeS <= 0) parts.push("Expires=Thu, 01 Jan 1970 00:00:00 GMT");
  if (opts.httpOnly) parts.push("HttpOnly");
  if (opts.secure) parts.push("Secure");
  return parts.join("; ");
}

/**
 * Over https the cookies are named `__Host-…`: a browser keeps such a cookie only if it is Secure,
 * has Path=/ and no Domain, and was set by this host, so a page on another port of the same host
 * (served over plain http, say) cannot plant a session or CSRF cookie this server would read.
 * Plain http (localhost) keeps the bare names, which browsers would refuse with the prefix.
 */
export const cookieName = (base: string, secure: boolean): string => (secure ? `__Host-${base}` : base);

/** Cookies get `Secure` when the request itself came over TLS or the lab is published over https. */
export function isSecureRequest(encrypted: boolean, publicUrl: string | undefined): boolean {
  return encrypted || (publicUrl?.startsWith("https:") ?? false);
}
