import { describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { main } from "./main";

const sink = (into: string[]) => new Writable({ write: (c: Buffer, _e, cb) => (into.push(c.toString()), cb()) });

describe("CLI errors", () => {
  it("says it cannot reach the server instead of 'fetch failed'", async () => {
    const err: string[] = [];
    // Port 9 on loopback refuses the connection: a real failure, no mock.
    const code = await main(
      ["pools", "list"],
      { out: sink([]), err: sink(err), cwd: process.cwd() },
      { AGENTLAB_URL: "http://127.0.0.1:9", AGENTLAB_TOKEN: "t" },
    );
    expect(code).toBe(1);
    expect(err.join("")).toMatch(/^agentlab: cannot reach http:\/\/127\.0\.0\.1:9 /);
  });
});
