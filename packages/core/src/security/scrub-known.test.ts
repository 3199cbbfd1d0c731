import { describe, expect, it } from "vitest";
import { scrubKnown } from "./scrub-known";
import { scrubSecrets } from "./scrub";

// A provider key must not survive in any form a provider or proxy could echo it in.
const key = "sk-live-Zq8w3LmN0pXr7TvB2cYd5HgK9JfE4sAu";
const b64 = (s: string) => Buffer.from(s).toString("base64");
const hex = (s: string) => Buffer.from(s).toString("hex");

describe("scrubKnown", () => {
  const echoes: Record<string, string> = {
    raw: `bad key ${key}`,
    upper: `BAD KEY ${key.toUpperCase()}`,
    lower: `bad key ${key.toLowerCase()}`,
    base64: `x-echo: ${b64(key)}`,
    "base64 inside Basic": `Authorization was ${b64(`user:${key}`)}`,
    "base64 at offset 1": `blob ${b64(`a${key}z`)}`,
    "base64 at offset 2": `blob ${b64(`ab${key}`)}`,
    base64url: `tok=${b64(`ab${key}`).replace(/\+/g, "-").replace(/\//g, "_")}`,
    hex: `hex ${hex(key)}`,
    "hex upper": `HEX ${hex(key).toUpperCase()}`,
    "split by a line break": `key: ${key.slice(0, 20)}\n${key.slice(20)}`,
    "split as concatenated strings": `"${key.slice(0, 9)}" + "${key.slice(9, 17)}" + "${key.slice(17)}"`,
    "split by escaped newlines": `${key.slice(0, 10)}\\n${key.slice(10, 21)}\\n${key.slice(21)}`,
    "halves apart": `first ${key.slice(0, 19)} and later ${key.slice(19)}`,
    "url-escaped": encodeURIComponent(`k=${key}/`),
  };
  it.each(Object.entries(echoes))("removes it %s", (_name, text) => {
    const out = scrubKnown(text, [key]);
    expect(out).toContain("[redacted]");
    // Nothing of 8 or more characters of the key (in any of the forms) is left.
    const leftovers = [key, hex(key), b64(key)].flatMap((f) =>
      Array.from({ length: f.length - 7 }, (_, i) => f.slice(i, i + 8).toLowerCase()),
    );
    for (const piece of leftovers) expect(out.toLowerCase()).not.toContain(piece);
  });

  it("positive control: every echo above carries the key for the old scrubbing (exact forms only)", () => {
    const oldScrub = (t: string) =>
      [key, encodeURIComponent(key), JSON.stringify(key).slice(1, -1)].reduce(
        (s, f) => s.split(f).join("[redacted]"),
        t,
      );
    const leaked = Object.entries(echoes).filter(([, t]) => oldScrub(t) !== t);
    // Only the raw and URL-escaped echoes were caught before; the other encodings went through.
    expect(leaked.map(([n]) => n).sort()).toEqual(["raw", "url-escaped"]);
  });

  it("leaves an answer's code alone when it holds no key (no pattern rules here)", () => {
    const code = 'password = "hunter2"\napi_key = os.environ["API_KEY"]\nprint(base64.b64encode(x))\n';
    expect(scrubKnown(code, [key])).toBe(code);
    expect(scrubSecrets(code)).not.toBe(code); // the error scrubbing would mangle it
    expect(scrubKnown("abc", ["ab"])).toBe("abc");
  });
});
