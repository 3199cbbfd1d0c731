// Pure helpers behind the enrollment panel.

/** Shell-quotes one argument for the copy-paste command (tokens are base64url, names may not be). */
export const shellQuote = (s: string): string =>
  /^[A-Za-z0-9_./:@=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;

export function enrollCommand(serverUrl: string, token: string): string {
  return `npx agentlab-agent enroll --server ${shellQuote(serverUrl)} --token ${shellQuote(token)}`;
}

export const parseLabels = (raw: string): string[] => [
  ...new Set(
    raw
      .split(/[\s,]+/)
      .map((l) => l.trim())
      .filter(Boolean),
  ),
];
