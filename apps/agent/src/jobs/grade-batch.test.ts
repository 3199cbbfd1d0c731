import { describe, expect, it } from "vitest";
import type { JobPayload } from "@agentlab/core";
import { sessionChunks } from "./grade-batch";

type Item = JobPayload<"grade-batch">["items"][number];
const item = (task: string, over: Partial<Item> = {}): Item => ({
  key: `${task}:${Math.random()}`,
  task,
  candidate: [{ path: "solution.py", content: "" }],
  isolation: "judge",
  limits: {},
  ...over,
});
const shape = (items: Item[], workers: number) => sessionChunks(items, workers).map((c) => c.indices);

describe("sessionChunks", () => {
  it("puts one task's judge items in sessions, in the order of their first item", () => {
    expect(shape([item("a"), item("b"), item("a"), item("b")], 2)).toEqual([
      [0, 2],
      [1, 3],
    ]);
  });

  it("splits a lone task's items so that every sandbox works, at most 16 per session", () => {
    expect(
      shape(
        Array.from({ length: 8 }, () => item("a")),
        2,
      ),
    ).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    expect(
      sessionChunks(
        Array.from({ length: 64 }, () => item("a")),
        2,
      ).map((c) => c.indices.length),
    ).toEqual([16, 16, 16, 16]);
  });

  it("grades in-process items and items with other limits apart", () => {
    const items = [item("a"), item("a", { isolation: "in_process" }), item("a", { limits: { testTimeoutS: 9 } })];
    expect(shape(items, 1)).toEqual([[0], [1], [2]]);
  });
});
