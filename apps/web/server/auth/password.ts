import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

// scrypt is memory-hard (128·N·r bytes per hash: 32 MiB at N=2^15, r=8), which makes GPU/ASIC
// guessing of a stolen hash expensive. The parameters are stored with each hash, so they can be
// raised later and old hashes still verify (and are re-hashed at the next login).
export type ScryptParams = { N: number; r: number; p: number };
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LEN = 32;
const SALT_LEN = 16;
// Hard ceilings so a tampered hash string cannot make verification allocate without bound.
const MAX_N = 2 ** 20;
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 256;

const derive = (password: string, salt: Buffer, { N, r, p }: ScryptParams): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const opts: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
    scrypt(password.normalize("NFKC"), salt, KEY_LEN, opts, (err, key) => (err ? reject(err) : resolve(key)));
  });

/** "scrypt$N$r$p$<salt b64url>$<key b64url>" */
export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_LEN);
  const key = await derive(password, salt, params);
  return ["scrypt", params.N, params.r, params.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

export function parsePasswordHash(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const [scheme, n, r, p, salt, key] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !key) return null;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const valid =
    [params.N, params.r, params.p].every((x) => Number.isInteger(x) && x > 0) &&
    params.N <= MAX_N &&
    (params.N & (params.N - 1)) === 0 &&
    params.r <= 32 &&
    params.p <= 16;
  return valid ? { params, salt: Buffer.from(salt, "base64url"), key: Buffer.from(key, "base64url") } : null;
}

/** Constant-time comparison of the derived key; an unreadable stored hash never verifies. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed || parsed.key.length !== KEY_LEN) return false;
  const key = await derive(password, parsed.salt, parsed.params);
  return timingSafeEqual(key, parsed.key);
}

export const needsRehash = (stored: string, params: ScryptParams = DEFAULT_SCRYPT): boolean => {
  const parsed = parsePasswordHash(stored);
  return !parsed || parsed.params.N < params.N || parsed.params.r < params.r || parsed.params.p < params.p;
};

// Logins for unknown emails still spend one scrypt, so response time does not reveal which emails
// have accounts. The dummy hash is computed once, lazily.
let dummy: Promise<string> | null = null;
export async function burnPasswordCheck(password: string): Promise<false> {
  dummy ??= hashPassword("agentlab-dummy-password");
  await verifyPassword(password, await dummy);
  return false;
}
