import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { chatCompletion } from "../../apps/web/server/teacher/client";

// A provider (or a proxy in front of it) that echoes the request's key inside a successful answer,
// upper-cased, base64- and hex-encoded and split over lines: the answer we store has none of it.

const KEY = "sk-echo-Zq8w3LmN0pXr7TvB2cYd5HgK9JfE";
let server: Server;
let base = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const auth = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      const content = [
        "Here is your fix.",
        `debug: ${auth.toUpperCase()}`,
        `b64: ${Buffer.from(`user:${auth}`).toString("base64")}`,
        `hex: ${Buffer.from(auth).toString("hex")}`,
        `split: ${auth.slice(0, 15)}\n${auth.slice(15)}`,
        "```python\ndef f():\n    return 0\n```",
      ].join("\n");
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "c",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const pieces = (s: string) => Array.from({ length: s.length - 7 }, (_, i) => s.slice(i, i + 8).toLowerCase());

describe("a key echoed in a successful answer", () => {
  it("is removed in every form before the answer is returned (and so stored)", async () => {
    // Positive control: the raw answer carries the key in those forms.
    const raw = await new OpenAI({ baseURL: base, apiKey: KEY, maxRetries: 0 }).chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    const rawText = raw.choices[0]?.message.content ?? "";
    expect(rawText).toContain(KEY.toUpperCase());
    expect(rawText).toContain(Buffer.from(KEY).toString("hex"));

    const reply = await chatCompletion({
      baseURL: base,
      apiKey: KEY,
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      params: { temperature: 0, top_p: 1, max_tokens: 100 },
      extraParams: {},
      timeoutMs: 5000,
      maxRetries: 0,
    });
    const leftovers = [KEY, Buffer.from(KEY).toString("hex"), Buffer.from(`user:${KEY}`).toString("base64").slice(8)];
    for (const piece of leftovers.flatMap(pieces)) expect(reply.text.toLowerCase()).not.toContain(piece);
    // The rest of the answer is intact.
    expect(reply.text).toContain("Here is your fix.");
    expect(reply.text).toContain("def f():\n    return 0");
  });
});
