// Pure helpers behind the enrollment panel.

/** Shell-quotes one argument for the copy-paste command (tokens are base64url, names may not be). */
export const shellQuote = (s: string): string =>
  /^[A-Za-z0-9_./:@=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;

export function enrollCommand(serverUrl: string, token: string): string {
  return `npx agentlab-agent enroll --server ${shellQuote(serverUrl)} --token ${shellQuote(token)}`;
}

/** The whole recipe for a box with a checkout of this repository: install, enroll, run. */
export function enrollRecipe(serverUrl: string, token: string): string {
  return [
    "npm ci --omit=dev && bash scripts/setup-grader.sh && bash scripts/setup-python.sh",
    enrollCommand(serverUrl, token),
    "npx agentlab-agent run",
  ].join("\n");
}

/**
 * A server address another machine cannot reach (loopback, or a bare host name without a dot
 * other than a LAN-style name): the agent on a GPU box would enroll against itself.
 */
export function unreachableFromOtherBoxes(serverUrl: string): boolean {
  let host: string;
  try {
    host = new URL(serverUrl).hostname;
  } catch {
    return false;
  }
  return (
    host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) || host === "[::1]" || host === "0.0.0.0"
  );
}

export const parseLabels = (raw: string): string[] => [
  ...new Set(
    raw
      .split(/[\s,]+/)
      .map((l) => l.trim())
      .filter(Boolean),
  ),
];
