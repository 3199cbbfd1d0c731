import { describe, expect, it } from "vitest";
import { EPISODE_TOOLS, ToolCall, type EpisodeStep } from "./schemas";
import {
  EPISODE_TOOL_SCHEMAS,
  NO_TOOL_CALL,
  TOOL_CALL_SYSTEM_PROMPT,
  TeacherMessage,
  callFromReply,
  teacherMessages,
} from "./teacher";

const h = "a".repeat(64);
const step = (
  index: number,
  call: { tool: string; args: unknown },
  output: string,
  role = "assistant",
): EpisodeStep => ({
  index,
  role: role === "assistant" ? "assistant" : "environment",
  call,
  result: { status: "ok", refusal: null, output, truncated: false },
  resultHash: h,
  snapshotBefore: h,
  snapshotAfter: h,
  wallMs: 1,
});

describe("teacher tool calls", () => {
  it("derives one function schema per environment tool from the ToolCall contract", () => {
    expect(EPISODE_TOOL_SCHEMAS.map((t) => t.function.name)).toEqual([...EPISODE_TOOLS]);
    const byName = Object.fromEntries(EPISODE_TOOL_SCHEMAS.map((t) => [t.function.name, t.function.parameters]));
    expect(byName.read_file).toMatchObject({ type: "object", required: ["path"], additionalProperties: false });
    expect(byName.edit_file).toMatchObject({ required: ["path", "old", "new"] });
    expect(byName.submit).toMatchObject({ type: "object", properties: {} });
    for (const t of EPISODE_TOOL_SCHEMAS) {
      expect(t.function.parameters).not.toHaveProperty("$schema");
      expect(t.function.description.length).toBeGreaterThan(10);
    }
  });

  it("renders a transcript as tool-call messages, ids by step, and stops at the environment's submit", () => {
    const steps = [
      step(0, { tool: "read_file", args: { path: "a.py" } }, "[a.py: lines 1-1 of 1]"),
      step(1, { tool: NO_TOOL_CALL, args: { content: "thinking" } }, "not a tool call"),
      step(2, { tool: "edit_file", args: "{broken" }, "not a tool call"),
      step(3, { tool: "submit", args: {} }, "budget exhausted", "environment"),
    ];
    const m = teacherMessages("Fix it.", steps);
    for (const x of m) expect(TeacherMessage.safeParse(x).success).toBe(true);
    expect(m.slice(0, 2)).toEqual([
      { role: "system", content: TOOL_CALL_SYSTEM_PROMPT },
      { role: "user", content: "Fix it." },
    ]);
    expect(m[2]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_0", type: "function", function: { name: "read_file", arguments: '{"path":"a.py"}' } }],
    });
    expect(m[3]).toEqual({ role: "tool", tool_call_id: "call_0", content: "[a.py: lines 1-1 of 1]" });
    expect(m[4]).toEqual({ role: "assistant", content: "thinking" });
    expect(m[5]?.role).toBe("user");
    expect(m[6]).toMatchObject({ tool_calls: [{ id: "call_2", function: { arguments: "{broken" } }] });
    expect(m).toHaveLength(8); // the environment's submit is not a turn anyone answered
  });

  it("maps a reply's first tool call to a call, keeps bad arguments as text, and prose as no call", () => {
    const call = callFromReply({
      content: "I will edit.",
      toolCalls: [
        { name: "edit_file", arguments: '{"path":"a.py","old":"x","new":"y"}' },
        { name: "submit", arguments: "{}" },
      ],
      finishReason: "tool_calls",
    });
    expect(ToolCall.parse(call)).toEqual({ tool: "edit_file", args: { path: "a.py", old: "x", new: "y" } });
    expect(
      callFromReply({ content: null, toolCalls: [{ name: "submit", arguments: "" }], finishReason: null }),
    ).toEqual({ tool: "submit", args: {} });
    const bad = callFromReply({
      content: null,
      toolCalls: [{ name: "read_file", arguments: "{path:" }],
      finishReason: null,
    });
    expect(bad).toEqual({ tool: "read_file", args: "{path:" });
    expect(ToolCall.safeParse(bad).success).toBe(false);
    const prose = callFromReply({ content: "done?", toolCalls: [], finishReason: "stop" });
    expect(prose).toEqual({ tool: NO_TOOL_CALL, args: { content: "done?" } });
    expect(ToolCall.safeParse(prose).success).toBe(false);
  });
});
