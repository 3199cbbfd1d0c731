// Control characters (TAB, LF, CR, NUL, DEL…) and backslashes are refused outright: browsers drop
// or rewrite them while parsing, so "/\t/evil.example" or "/\\evil.example" would become "//evil.example".
const isUnsafe = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f || c === "\\");
const BASE = "http://agentlab.invalid";

/**
 * Only same-origin relative paths are followed after sign-in. The candidate is parsed with the URL
 * API against a dummy base; anything whose origin differs from that base ("//evil.com",
 * "https://…", "javascript:…") is an open redirect and falls back to "/".
 */
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || isUnsafe(next)) return "/";
  let url: URL;
  try {
    url = new URL(next, BASE);
  } catch {
    return "/";
  }
  if (url.origin !== BASE) return "/";
  const path = `${url.pathname}${url.search}${url.hash}`;
  // The normalized path must not start a new authority either (e.g. "/%2F%2Fevil" stays a path).
  return path.startsWith("//") ? "/" : path;
}
