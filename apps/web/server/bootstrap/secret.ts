import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The server secret: from the environment, or generated once and kept (0600) in the data dir. */
export async function loadOrCreateSecret(dataDir: string, fromEnv: string | undefined): Promise<string> {
  if (fromEnv) return fromEnv;
  const path = join(dataDir, "secret");
  const existing = await readFile(path, "utf8").catch(() => null);
  if (existing && existing.trim().length >= 32) return existing.trim();
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString("base64url");
  await writeFile(path, secret, { mode: 0o600 });
  await chmod(path, 0o600);
  return secret;
}
