import { describe, expect, it } from "vitest";
import { isPublicPath, loginUrl, readCookie } from "./cookies";
import { canAct, parseMe } from "./viewer";

describe("cookies", () => {
  it("reads one cookie out of document.cookie", () => {
    const jar = "theme=light; agentlab_csrf=abc%2Fdef; other=1";
    expect(readCookie(jar, "agentlab_csrf")).toBe("abc/def");
    expect(readCookie(jar, "agentlab")).toBeNull();
    expect(readCookie("", "agentlab_csrf")).toBeNull();
    expect(readCookie("x_agentlab_csrf=no; agentlab_csrf=yes", "agentlab_csrf")).toBe("yes");
    expect(readCookie("agentlab_csrf=%E0%A4%A", "agentlab_csrf")).toBe("%E0%A4%A");
  });

  it("builds the login redirect and leaves public pages alone", () => {
    expect(loginUrl("/jobs/1", "?state=failed")).toBe("/login?next=%2Fjobs%2F1%3Fstate%3Dfailed");
    expect(isPublicPath("/login")).toBe(true);
    expect(isPublicPath("/share/abc")).toBe(true);
    expect(isPublicPath("/setup")).toBe(true);
    expect(isPublicPath("/jobs")).toBe(false);
    expect(isPublicPath("/loginx")).toBe(false);
  });
});

describe("viewer", () => {
  it("parses auth.me whether the principal is top-level or nested", () => {
    expect(parseMe(null)).toEqual({ status: "signed-out" });
    expect(parseMe({ id: "u", email: "a@b.c", name: "Ada", role: "admin", via: "session" })).toEqual({
      status: "signed-in",
      name: "Ada",
      email: "a@b.c",
      role: "admin",
    });
    expect(parseMe({ user: { email: "a@b.c", role: "viewer" } })).toEqual({
      status: "signed-in",
      name: "a@b.c",
      email: "a@b.c",
      role: "viewer",
    });
    expect(parseMe({ nothing: true })).toEqual({ status: "signed-out" });
  });

  it("offers actions by role, and to everyone while auth is absent", () => {
    const as = (role: "viewer" | "member" | "admin") => ({ status: "signed-in" as const, name: "x", email: "x", role });
    expect(canAct(as("admin"), "admin")).toBe(true);
    expect(canAct(as("member"), "admin")).toBe(false);
    expect(canAct(as("member"), "member")).toBe(true);
    expect(canAct(as("viewer"), "member")).toBe(false);
    expect(canAct({ status: "signed-out" }, "viewer")).toBe(false);
    expect(canAct({ status: "unavailable" }, "admin")).toBe(true);
  });
});
