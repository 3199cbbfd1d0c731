import pino, { type Logger } from "pino";

// Secrets never reach a log line: these paths are censored wherever they appear.
export const REDACT_PATHS = [
  "token",
  "*.token",
  "credential",
  "*.credential",
  "apiKey",
  "*.apiKey",
  "password",
  "*.password",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "headers.cookie",
  "req.headers.authorization",
  "req.headers.cookie",
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACT_PATHS, censor: "[redacted]" }, base: { app: "agentlab-web" } },
    destination,
  );
}
export type { Logger };
