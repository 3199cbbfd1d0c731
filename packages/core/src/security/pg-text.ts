// Text Postgres refuses: U+0000 in a text column or a jsonb string ("invalid byte sequence",
// "unsupported Unicode escape sequence"), and a lone UTF-16 surrogate in jsonb (a text column
// would silently store U+FFFD for it). One write with such text fails whole: a log chunk an agent
// then retries forever, a collection's batch of teacher answers, a task import.
//
// Two answers, each in one place: text we only record (agent output, teacher answers, errors) is
// escaped by `storableText`/`storableJson` where it is written; text a user asks us to keep (names,
// task fields, any procedure input) is refused with the field named (`unstorableTextAt`).

import type { z } from "zod";

const NUL = "\u0000";
const LONE = "[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]";
const LONE_SURROGATE = new RegExp(LONE);
const LONE_SURROGATES = new RegExp(LONE, "g");
const unstorable = (s: string) => s.includes(NUL) || LONE_SURROGATE.test(s);

/** `s` as Postgres stores it: U+0000 written as the six characters `\u0000`, lone surrogates as U+FFFD. */
export function storableText(s: string): string {
  if (!unstorable(s)) return s;
  return s.replaceAll(NUL, "\\u0000").replace(LONE_SURROGATES, "\uFFFD");
}

/** A JSON value with every string (keys included) passed through `storableText`. */
export function storableJson<T>(value: T): T {
  return mapStrings(value) as T;
}

function mapStrings(v: unknown): unknown {
  if (typeof v === "string") return storableText(v);
  if (Array.isArray(v)) return v.map(mapStrings);
  if (v && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [storableText(k), mapStrings(x)]));
  return v;
}

/** For `.superRefine` on a schema of user text: an issue at the first string Postgres would refuse. */
export function refuseUnstorableText(value: unknown, ctx: z.RefinementCtx) {
  const at = unstorableTextAt(value);
  if (at) ctx.addIssue({ code: "custom", path: at.path, message: at.message });
}

export type UnstorableText = { path: Array<string | number>; message: string };

const why = (s: string) =>
  s.includes(NUL)
    ? "must not contain the character U+0000 (NUL)"
    : "must not contain a lone UTF-16 surrogate (invalid Unicode)";

/** Why Postgres would refuse the string `s`, or null when it stores it. */
export const unstorableTextReason = (s: string): string | null => (unstorable(s) ? why(s) : null);

/** Where `value` holds text Postgres refuses (the first such string or key), or null. */
export function unstorableTextAt(value: unknown, path: Array<string | number> = []): UnstorableText | null {
  if (typeof value === "string") return unstorable(value) ? { path, message: why(value) } : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = unstorableTextAt(value[i], [...path, i]);
      if (at) return at;
    }
    return null;
  }
  if (value && typeof value === "object") {
    for (const [k, x] of Object.entries(value)) {
      if (unstorable(k)) return { path: [...path, storableText(k)], message: `its key ${why(k)}` };
      const at = unstorableTextAt(x, [...path, k]);
      if (at) return at;
    }
  }
  return null;
}
