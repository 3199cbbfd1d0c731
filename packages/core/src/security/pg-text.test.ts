import { describe, expect, it } from "vitest";
import { z } from "zod";
import { refuseUnstorableText, storableJson, storableText, unstorableTextAt } from "./pg-text";

describe("text Postgres refuses", () => {
  it("is escaped where we only record it: NUL as \\u0000, a lone surrogate as U+FFFD", () => {
    expect(storableText("a\u0000b")).toBe("a\\u0000b");
    expect(storableText("x\uD800y")).toBe("x\uFFFDy");
    expect(storableText("end\uDC00")).toBe("end\uFFFD");
    // Well-formed text, pairs included, is returned as is.
    expect(storableText("ok 😀 \\u0000")).toBe("ok 😀 \\u0000");
    expect(storableJson({ "k\u0000": ["v\u0000", 1, null, { n: "\uD83D" }] })).toEqual({
      "k\\u0000": ["v\\u0000", 1, null, { n: "\uFFFD" }],
    });
  });

  it("is found with its path where a user asked us to keep it", () => {
    expect(unstorableTextAt({ name: "fine", files: [{ content: "ok" }, { content: "a\u0000" }] })).toEqual({
      path: ["files", 1, "content"],
      message: "must not contain the character U+0000 (NUL)",
    });
    expect(unstorableTextAt({ meta: { "bad\u0000key": 1 } })?.path).toEqual(["meta", "bad\\u0000key"]);
    expect(unstorableTextAt({ s: "\uDFFF" })?.message).toMatch(/lone UTF-16 surrogate/);
    expect(unstorableTextAt({ name: "fine", n: 3, list: ["😀"] })).toBeNull();
  });

  it("refines a schema with the field named", () => {
    const S = z.object({ name: z.string(), tags: z.array(z.string()) }).superRefine(refuseUnstorableText);
    const r = S.safeParse({ name: "x", tags: ["ok", "n\u0000"] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]).toMatchObject({ path: ["tags", 1], message: expect.stringContaining("U+0000") });
    expect(S.safeParse({ name: "x", tags: ["ok"] }).success).toBe(true);
  });
});
