import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Readable, Writable } from "node:stream";
import type { ApiClient } from "./client";
import type { CliEnv } from "./env";

// One command = one object in apps/web/cli/commands/<area>.ts, listed in commands/index.ts.
export type CliIo = { out: Writable; err: Writable; cwd: string; in?: Readable };
export type CliContext = CliIo & {
  /** The API client for --server/--token (or AGENTLAB_URL/AGENTLAB_TOKEN, or `agentlab login`'s); throws when no token is set. */
  api(): ApiClient;
  /** The server this invocation talks to, and the environment it was started with (for `login`). */
  server: string;
  env: CliEnv;
  /** A token given by --token or AGENTLAB_TOKEN (never the stored one). */
  explicitToken: string | undefined;
  connect(token: string): ApiClient;
};

export type Command = {
  /** Words that select it, e.g. "tasks validate". */
  name: string;
  usage: string;
  summary: string;
  options?: ParseArgsConfig["options"];
  /** Returns the exit code: 0 success, 1 failure (e.g. invalid file), 2 usage error. */
  run(
    args: { positionals: string[]; values: Record<string, string | boolean | undefined> },
    ctx: CliContext,
  ): Promise<number>;
};

export class UsageError extends Error {}

export function parseCommandArgs(cmd: Command, argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...cmd.options, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
    strict: true,
  });
  return { values: values as Record<string, string | boolean | undefined>, positionals };
}

export const str = (v: string | boolean | undefined, name: string): string => {
  if (typeof v !== "string" || v === "") throw new UsageError(`${name} is required`);
  return v;
};

export const num = (v: string | boolean | undefined, name: string, fallback?: number): number => {
  if (v === undefined && fallback !== undefined) return fallback;
  const n = Number(v);
  if (typeof v !== "string" || !Number.isFinite(n)) throw new UsageError(`${name} must be a number`);
  return n;
};

export const writeLine = (s: Writable, line = "") => s.write(`${line}\n`);
