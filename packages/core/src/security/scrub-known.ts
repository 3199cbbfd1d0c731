// A known secret (the provider key of the call) in whatever form a provider or proxy echoes it:
// as is, in another case, URL- or JSON-escaped, hex- or base64-encoded (at any byte alignment,
// inside a longer encoded string such as `Basic base64(user:key)`), split by line breaks, quotes
// or `+` concatenation, or cut into pieces. Each occurrence of 12 or more consecutive characters
// of any form is removed; shorter keys must appear whole.

export const REDACTED = "[redacted]";
const FRAGMENT = 12;

const utf8 = new TextEncoder();
// ASCII only, so that every index of the lower-cased text is the same character of the original.
const lowerAscii = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const hexOf = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const base64Of = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));

/** The key's forms, lower-cased: the part of each encoding that depends on the key's bytes only. */
function formsOf(key: string): string[] {
  const bytes = utf8.encode(key);
  const forms = [key, encodeURIComponent(key), JSON.stringify(key).slice(1, -1), hexOf(bytes)];
  for (let shift = 0; shift < 3; shift++) {
    // Base64 of the key after `shift` other bytes: the first group mixes in those, the last one
    // whatever follows; the groups in between are the key's alone.
    const padded = new Uint8Array(shift + bytes.length);
    padded.set(bytes, shift);
    const b64 = base64Of(padded).slice(shift ? 4 : 0, Math.floor(padded.length / 3) * 4);
    forms.push(b64, b64.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return [...new Set(forms.filter((f) => f.length >= 4).map(lowerAscii))];
}

// Characters a split key may be interleaved with: white space, quotes, `+`, commas, and the
// escapes \n \r \t as two characters.
function squeeze(text: string): { squeezed: string; at: number[] } {
  let squeezed = "";
  const at: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (c === "\\" && "nrt".includes(text[i + 1] ?? "x")) {
      i++;
      continue;
    }
    if (/[\s"'`+,]/.test(c)) continue;
    squeezed += lowerAscii(c);
    at.push(i);
  }
  return { squeezed, at };
}

/** Calls `mark` for each stretch of `hay` (lower-cased) that hold a form of the key. */
function markForms(hay: string, forms: string[], mark: (from: number, to: number) => void) {
  for (const form of forms) {
    if (form.length < FRAGMENT) {
      for (let i = hay.indexOf(form); i >= 0; i = hay.indexOf(form, i + 1)) mark(i, i + form.length);
      continue;
    }
    const grams = new Set<string>();
    for (let i = 0; i + FRAGMENT <= form.length; i++) grams.add(form.slice(i, i + FRAGMENT));
    for (let i = 0; i + FRAGMENT <= hay.length; i++) if (grams.has(hay.slice(i, i + FRAGMENT))) mark(i, i + FRAGMENT);
  }
}

/**
 * `text` with every form of the known secrets replaced by `[redacted]`. Only the known values:
 * no pattern rules, so it is safe on a model's answer (code that says `password = x` stays).
 * Values shorter than 4 characters are ignored (they would blank ordinary words).
 */
export function scrubKnown(text: string, known: readonly (string | null | undefined)[]): string {
  const keys = known.filter((k): k is string => typeof k === "string" && k.length >= 4);
  if (keys.length === 0 || text.length === 0) return text;
  const marked = new Uint8Array(text.length);
  const lower = lowerAscii(text);
  const { squeezed, at } = squeeze(text);
  for (const key of keys) {
    const forms = formsOf(key);
    markForms(lower, forms, (from, to) => marked.fill(1, from, to));
    // Split by separators: a stretch of the squeezed text maps back from its first to its last character.
    markForms(squeezed, forms.slice(0, 1), (from, to) => marked.fill(1, at[from] ?? 0, (at[to - 1] ?? 0) + 1));
  }
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (!marked[i]) out += text[i];
    else if (i === 0 || !marked[i - 1]) out += REDACTED;
  }
  return out;
}
