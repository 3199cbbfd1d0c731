import { describe, expect, it } from "vitest";
import { crossFileCountText, crossFileUsesText } from "./cross-file";

describe("cross-file wording", () => {
  it("names a task's uses, says none when it reads no dependency, and tells an old audit apart", () => {
    expect(crossFileUsesText(["limits.LIMIT"])).toBe("limits.LIMIT");
    expect(crossFileUsesText(["a.X", "b.Y"])).toBe("a.X, b.Y");
    expect(crossFileUsesText([])).toBe("none");
    expect(crossFileUsesText(undefined)).toBe("not recorded");
  });

  it("counts a pool's tasks and groups, singular and plural, and the tasks not known yet", () => {
    expect(crossFileCountText({ tasks: 210, groups: 210, unknown: 0 })).toBe("210 tasks in 210 groups");
    expect(crossFileCountText({ tasks: 1, groups: 1, unknown: 0 })).toBe("1 task in 1 group");
    expect(crossFileCountText({ tasks: 0, groups: 0, unknown: 2 })).toBe("0 tasks in 0 groups (2 tasks not known yet)");
    expect(crossFileCountText({ tasks: 1200, groups: 3, unknown: 1 })).toBe(
      "1,200 tasks in 3 groups (1 task not known yet)",
    );
  });
});
