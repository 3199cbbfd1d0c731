import type { IncomingMessage, ServerResponse } from "node:http";

// Security headers on every response of the custom server (tRPC, plain routes, Next pages), set
// before any handler writes, so Next's pages, API replies and share pages all carry them.

/**
 * Next's App Router pages hydrate with inline `<script>` chunks (`self.__next_f.push`) and
 * React/Tailwind use style attributes, so scripts and styles need 'unsafe-inline'; dev mode's
 * HMR also needs eval and a websocket. Everything else is same-origin only; `frame-ancestors
 * 'none'` (and X-Frame-Options for old browsers) stops framing the signed-in dashboard.
 */
export function contentSecurityPolicy(dev: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Share links carry their token in the path: those pages send no Referer at all. */
const isSharePage = (url: string) => url === "/share" || url.startsWith("/share/") || url.startsWith("/share?");

export function setSecurityHeaders(req: IncomingMessage, res: ServerResponse, opts: { dev: boolean }): void {
  res.setHeader("Content-Security-Policy", contentSecurityPolicy(opts.dev));
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", isSharePage(req.url ?? "/") ? "no-referrer" : "strict-origin-when-cross-origin");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
}
