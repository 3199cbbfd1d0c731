import { describe, expect, it } from "vitest";
import { parsingText, parsingWarns } from "./report-parsing";

describe("answer parsing counts on the report", () => {
  const row = (answers: number, unparsed: number) => ({ split: "test" as const, modelKey: "base", answers, unparsed });

  it("say N of N and point at the format when nothing parsed", () => {
    expect(parsingText(row(32, 32))).toMatch(/^32 of 32 answers could not be parsed: the model never answered/);
    expect(parsingText(row(32, 32))).toContain("Next:");
  });

  it("count a partial loss as failures with its own next step", () => {
    expect(parsingText(row(32, 3))).toMatch(/^3 of 32 answers could not be parsed \(graded as failures\)\. Next:/);
  });

  it("warn only when an answer was lost (control: all parsed reads as such)", () => {
    expect(parsingText(row(32, 0))).toBe("all 32 answers parsed");
    expect(parsingWarns([row(32, 0), row(10, 0)])).toBe(false);
    expect(parsingWarns([row(32, 0), row(10, 1)])).toBe(true);
  });
});
