/** Only same-site paths are followed after sign-in: "//evil.com" or "https://…" would be an open redirect. */
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  return next;
}
