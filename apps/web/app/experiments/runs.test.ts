import { describe, expect, it } from "vitest";
import { defaultView, pageLabel, toggleSort, viewFromParams, viewToInput, viewToParams } from "./runs";

describe("runs table helpers", () => {
  it("round-trips the view through the URL and drops unknown values", () => {
    const v = {
      ...defaultView,
      q: "lr",
      tag: "baseline",
      sort: "delta" as const,
      dir: "asc" as const,
      page: 2,
      archived: true,
    };
    expect(viewFromParams(new URLSearchParams(viewToParams(v)))).toEqual(v);
    expect(viewToParams(defaultView)).toBe("");
    const odd = viewFromParams(new URLSearchParams("sort=drop&state=bogus&page=-3"));
    expect(odd.sort).toBe("createdAt");
    expect(odd.page).toBe(0);
    expect(viewToInput(odd)).not.toHaveProperty("state");
    expect(viewToInput({ ...v, state: "failed" })).toMatchObject({
      state: "failed",
      offset: 100,
      limit: 50,
      tag: "baseline",
    });
  });
  it("toggles sort and labels pages", () => {
    const a = toggleSort(defaultView, "delta");
    expect([a.sort, a.dir]).toEqual(["delta", "desc"]);
    expect(toggleSort(a, "delta").dir).toBe("asc");
    expect(toggleSort(defaultView, "name").dir).toBe("asc");
    expect([pageLabel(0, 50, 123), pageLabel(2, 23, 123), pageLabel(0, 0, 0)]).toEqual([
      "1–50 of 123",
      "101–123 of 123",
      "0 runs",
    ]);
  });
});
