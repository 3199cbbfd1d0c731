import { DomainError } from "../errors";
import type { EvalProtocol } from "./config";

// Base and adapter are compared only when they were evaluated under one protocol: the same prompt
// template hash, decoding parameters, token budget and grader version (brief §2).

export type ProtocolMismatch = { field: string; values: Record<string, string> };
export type ProtocolCheck = { ok: boolean; protocol: EvalProtocol | null; mismatches: ProtocolMismatch[] };

const fields: Array<[string, (p: EvalProtocol) => string]> = [
  ["promptTemplateHash", (p) => p.promptTemplateHash],
  ["decoding", (p) => JSON.stringify([p.decoding.doSample, p.decoding.temperature, p.decoding.topP])],
  ["maxNewTokens", (p) => String(p.maxNewTokens)],
  ["graderVersion", (p) => p.graderVersion],
];

/** `runs` maps a label (e.g. "base", "seed 1 · epoch 2") to the protocol its evaluation actually used. */
export function checkProtocol(runs: Readonly<Record<string, EvalProtocol>>): ProtocolCheck {
  const entries = Object.entries(runs);
  const mismatches: ProtocolMismatch[] = [];
  for (const [field, get] of fields) {
    const values = Object.fromEntries(entries.map(([label, p]) => [label, get(p)]));
    if (new Set(Object.values(values)).size > 1) mismatches.push({ field, values });
  }
  const first = entries[0]?.[1] ?? null;
  return { ok: mismatches.length === 0 && entries.length > 0, protocol: mismatches.length === 0 ? first : null, mismatches };
}

export function assertSameProtocol(runs: Readonly<Record<string, EvalProtocol>>): EvalProtocol {
  const check = checkProtocol(runs);
  if (!check.ok || !check.protocol) {
    const what = check.mismatches.map((m) => `${m.field} (${Object.entries(m.values).map(([k, v]) => `${k}=${v}`).join(", ")})`).join("; ");
    throw new DomainError("PRECONDITION_FAILED", `refusing to compare evaluations run under different protocols: ${what || "no evaluations"}`, check);
  }
  return check.protocol;
}
