import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { CliEnv } from "./env";

// `agentlab login` keeps one server and its API token in the user's config folder, readable by
// the user only (0600 in a 0700 folder), so the token stays out of shell history and rc files.
// The stored token is only ever sent to the server it was stored for.

const Credentials = z.object({ server: z.string().url(), token: z.string().min(1) }).strict();
export type Credentials = z.infer<typeof Credentials>;

/** Null when the environment names no folder at all (no HOME): nothing is stored or read then. */
export function credentialsPath(env: CliEnv): string | null {
  if (env.AGENTLAB_CONFIG_DIR) return join(env.AGENTLAB_CONFIG_DIR, "credentials.json");
  const config = env.XDG_CONFIG_HOME ?? (env.HOME ? join(env.HOME, ".config") : null);
  return config ? join(config, "agentlab", "credentials.json") : null;
}

/** The stored login, or null; a damaged file is an error naming the file and the field. */
export function readCredentials(env: CliEnv): Credentials | null {
  const path = credentialsPath(env);
  if (!path || !existsSync(path)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(
      `${path}: not JSON (${err instanceof Error ? err.message : String(err)}); run agentlab login again`,
      { cause: err },
    );
  }
  const parsed = Credentials.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path}: ${issue?.path.join(".") || "(file)"}: ${issue?.message}; run agentlab login again`);
  }
  return parsed.data;
}

export function writeCredentials(env: CliEnv, c: Credentials): string {
  const path = credentialsPath(env);
  if (!path) throw new Error("no folder for the credentials: set HOME, XDG_CONFIG_HOME or AGENTLAB_CONFIG_DIR");
  const dir = join(path, "..");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(c, null, 2)}\n`, { mode: 0o600 });
  // writeFileSync keeps the mode of an existing file; a file made readable by others is narrowed again.
  chmodSync(path, 0o600);
  return path;
}

export function removeCredentials(env: CliEnv): boolean {
  const path = credentialsPath(env);
  if (!path || !existsSync(path)) return false;
  rmSync(path);
  return true;
}

/** Same server whatever the spelling of its trailing slash. */
export const sameServer = (a: string, b: string): boolean => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
