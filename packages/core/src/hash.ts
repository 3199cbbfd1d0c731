import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

// Pure sha256 so that fingerprints and manifest hashes are computed identically everywhere.
export const sha256Hex = (data: string | Uint8Array): string =>
  bytesToHex(sha256(typeof data === "string" ? utf8ToBytes(data) : data));

/** JSON with object keys sorted recursively: the canonical form every hash in agentlab is taken over. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}
