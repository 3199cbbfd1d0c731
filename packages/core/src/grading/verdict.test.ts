import { describe, expect, it } from "vitest";
import { decideVerdict, type RunEvidence } from "./verdict";
import type { TestOutcome } from "./schemas";

const t = (id: string, layer: TestOutcome["layer"], outcome: TestOutcome["outcome"]): TestOutcome => ({
  id,
  layer,
  outcome,
  message: "",
});
const CANARY = "test_ab12::test_ab12";
const tests = (pub: TestOutcome["outcome"], hid: TestOutcome["outcome"]) => [
  t("test_public::test_a", "public", pub),
  t("test_hidden::test_b", "hidden", hid),
  t(CANARY, "canary", "failed"),
];
const ev = (over: Partial<RunEvidence> = {}): RunEvidence => ({
  infraError: null,
  syntaxErrors: [],
  limit: null,
  limitDetail: "",
  runnerLost: false,
  exitCode: 1,
  junit: tests("passed", "passed"),
  plugin: tests("passed", "passed"),
  canaryId: CANARY,
  expectedIds: ["test_public::test_a", "test_hidden::test_b"],
  ...over,
});

describe("decideVerdict", () => {
  it("passes only when every channel agrees", () => expect(decideVerdict(ev()).verdict).toBe("pass"));
  it("orders layers: syntax, public, hidden", () => {
    expect(decideVerdict(ev({ syntaxErrors: ["solution.py: SyntaxError"] })).verdict).toBe("fail_syntax");
    expect(decideVerdict(ev({ junit: tests("failed", "failed"), plugin: tests("failed", "failed") })).verdict).toBe(
      "fail_public",
    );
    expect(decideVerdict(ev({ junit: tests("passed", "error"), plugin: tests("passed", "error") })).verdict).toBe(
      "fail_hidden",
    );
    expect(decideVerdict(ev({ junit: tests("passed", "skipped"), plugin: tests("passed", "skipped") })).verdict).toBe(
      "fail_hidden",
    );
  });
  it("limits and infra errors win over test outcomes", () => {
    expect(decideVerdict(ev({ limit: "timeout" })).verdict).toBe("timeout");
    expect(decideVerdict(ev({ limit: "resource_limit" })).verdict).toBe("resource_limit");
    expect(decideVerdict(ev({ infraError: "no python" })).verdict).toBe("infra_error");
  });
  it("flags a canary that passed, a wrong exit status, missing reports and disagreement as tampered", () => {
    const canaryPassed = [
      t("test_public::test_a", "public", "passed"),
      t("test_hidden::test_b", "hidden", "passed"),
      t(CANARY, "canary", "passed"),
    ];
    expect(decideVerdict(ev({ junit: canaryPassed, plugin: canaryPassed, exitCode: 0 })).verdict).toBe("tampered");
    expect(decideVerdict(ev({ exitCode: 0 })).verdict).toBe("tampered");
    expect(decideVerdict(ev({ junit: null })).verdict).toBe("tampered");
    expect(decideVerdict(ev({ plugin: tests("passed", "failed") })).verdict).toBe("tampered");
  });
  it("never turns the agent's own interruption or a lost runner into a verdict about the candidate", () => {
    expect(decideVerdict(ev({ runnerLost: true })).verdict).toBe("infra_error");
    expect(decideVerdict(ev({ interrupted: "shutdown", exitCode: null, junit: null })).verdict).toBe("infra_error");
  });
  it("names the tests whose candidate calls timed out, and flags a broken channel as tampered", () => {
    const failing = tests("passed", "failed");
    const slow = decideVerdict(
      ev({
        junit: failing,
        plugin: failing,
        events: [{ kind: "timeout", test: "test_hidden::test_b", detail: "no answer" }],
      }),
    );
    expect(slow.verdict).toBe("timeout");
    expect(slow.reasons[0]).toContain("test_hidden::test_b");
    expect(
      decideVerdict(ev({ events: [{ kind: "protocol", test: "test_public::test_a", detail: "unparsable frame" }] }))
        .verdict,
    ).toBe("tampered");
    expect(
      decideVerdict(ev({ events: [{ kind: "exited", test: "test_public::test_a", detail: "eof" }] })).verdict,
    ).toBe("pass");
  });
  it("makes a judge death after pytest started the candidate's failure, while the agent's own abort stays infra", () => {
    const died = [{ kind: "died", test: "", detail: "the judge process was killed by SIGABRT after pytest started" }];
    const r = decideVerdict(ev({ exitCode: null, junit: null, plugin: null, events: died }));
    expect(r.verdict).toBe("tampered");
    expect(r.reasons[0]).toContain("SIGABRT");
    expect(decideVerdict(ev({ interrupted: "shutdown", events: died })).verdict).toBe("infra_error");
    // Control: the same death reported before pytest started (the grader's own failure) stays infra.
    expect(decideVerdict(ev({ infraError: "the judge failed before pytest started", events: [] })).verdict).toBe(
      "infra_error",
    );
  });
  it("accepts a skip only where the reference skipped the same test", () => {
    const skipped = [
      t("test_public::test_a", "public", "passed"),
      t("test_hidden::test_b", "hidden", "skipped"),
      t(CANARY, "canary", "failed"),
    ];
    const base = { junit: skipped, plugin: skipped };
    expect(decideVerdict(ev({ ...base, expectedSkips: ["test_hidden::test_b"] })).verdict).toBe("pass");
    // Control: the same skip where the reference ran the test is a failure.
    expect(decideVerdict(ev({ ...base, expectedSkips: [] })).verdict).toBe("fail_hidden");
    expect(decideVerdict(ev({ ...base, expectedIds: null })).verdict).toBe("pass"); // the reference run itself
  });
  it("requires the reference's test ids, except for modules that failed to import", () => {
    expect(
      decideVerdict(ev({ expectedIds: ["test_public::test_a", "test_hidden::test_b", "test_hidden::test_c"] })).verdict,
    ).toBe("tampered");
    const broken = [
      t("test_public::test_a", "public", "passed"),
      t("test_hidden::[collection]", "hidden", "error"),
      t(CANARY, "canary", "failed"),
    ];
    expect(decideVerdict(ev({ junit: broken, plugin: broken })).verdict).toBe("fail_hidden");
    expect(decideVerdict(ev({ expectedIds: null })).verdict).toBe("pass");
  });
});
