import { describe, expect, it } from "vitest";
import { EpisodeJobPayload } from "./job";
import { callFromLocalAnswer, localTurnSeed } from "./local";
import { MALFORMED_TOOL_CALL, NO_TOOL_CALL } from "./teacher";

const answer = (over: Partial<Parameters<typeof callFromLocalAnswer>[0]>) => ({
  id: 0,
  text: "",
  call: null,
  malformed: null,
  prompt_tokens: 10,
  completion_tokens: 5,
  finish_reason: "stop" as const,
  ...over,
});

describe("local policy", () => {
  it("maps a parsed call to the environment's call, a malformed one and prose to refused turns", () => {
    expect(callFromLocalAnswer(answer({ call: { name: "read_file", arguments: '{"path":"a.py"}' } }))).toEqual({
      tool: "read_file",
      args: { path: "a.py" },
    });
    expect(callFromLocalAnswer(answer({ text: "<tool_call>{", malformed: "not closed" }))).toEqual({
      tool: MALFORMED_TOOL_CALL,
      args: { content: "<tool_call>{", why: "not closed" },
    });
    expect(callFromLocalAnswer(answer({ text: "hmm" })).tool).toBe(NO_TOOL_CALL);
  });

  it("draws a turn's seed from the run's seed and the step: stable, distinct across steps and seeds", () => {
    expect(localTurnSeed(3, 0)).toBe(localTurnSeed(3, 0));
    expect(localTurnSeed(3, 0)).not.toBe(localTurnSeed(3, 1));
    expect(localTurnSeed(3, 0)).not.toBe(localTurnSeed(4, 0));
    expect(localTurnSeed(3, 0)).toBeLessThan(2 ** 31);
  });

  it("refuses an adapter hash without its archive (control: with it, accepted)", () => {
    const base = { kind: "local", baseModel: "Qwen/Qwen2.5-0.5B-Instruct", adapterSha256: "a".repeat(64) };
    const payload = (policy: object) =>
      EpisodeJobPayload.safeParse({
        task: {
          id: "t",
          source_group: "t",
          language: "python",
          instruction: "x",
          metadata: {},
          files: [{ path: "a.py", role: "main", content: "x = 1\n" }],
          public_tests: [{ path: "test_a.py", content: "def test_a():\n    pass\n" }],
          hidden_tests: [{ path: "test_h.py", content: "def test_h():\n    pass\n" }],
          reference: [{ path: "a.py", content: "x = 2\n" }],
        },
        policy,
        seed: 0,
      });
    expect(payload(base).success).toBe(false);
    expect(payload({ ...base, adapterArtifact: "b".repeat(64) }).success).toBe(true);
  });
});
