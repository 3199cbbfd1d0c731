import { describe, expect, it } from "vitest";
import { parseCrossFile } from "./cross-file";

describe("parseCrossFile", () => {
  const line = (o: unknown) => `${JSON.stringify(o)}\n`;

  it("returns the uses of the one answer line for the task", () => {
    expect(parseCrossFile(line({ id: "t/1", group: "g", uses: ["limits.LIMIT"] }), "t/1")).toEqual(["limits.LIMIT"]);
    expect(parseCrossFile(line({ id: "t/1", group: "g", uses: [] }), "t/1")).toEqual([]);
  });

  it("refuses an answer for another task, a bad field, no answer or two", () => {
    expect(() => parseCrossFile(line({ id: "t/2", group: "g", uses: [] }), "t/1")).toThrow(/field "id" is t\/2/);
    expect(() => parseCrossFile(line({ id: "t/1", group: "g", uses: "limits.LIMIT" }), "t/1")).toThrow(
      /field "uses" is invalid/,
    );
    expect(() => parseCrossFile("", "t/1")).toThrow(/expected one answer line, got 0/);
    const two = line({ id: "t/1", group: "g", uses: [] }).repeat(2);
    expect(() => parseCrossFile(two, "t/1")).toThrow(/got 2/);
    expect(() => parseCrossFile("not json\n", "t/1")).toThrow(/unreadable output/);
  });
});
