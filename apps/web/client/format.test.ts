import { describe, expect, it } from "vitest";
import {
  ago,
  bytes,
  duration,
  elapsed,
  interval,
  megabytes,
  pct,
  pp,
  pValue,
  shortId,
  timeLeftText,
  timestamp,
} from "./format";

describe("format", () => {
  const now = Date.parse("2026-01-31T12:00:00Z");

  it("ago counts back in the largest whole unit and handles future and missing times", () => {
    expect(ago("2026-01-31T11:59:30Z", now)).toBe("30s ago");
    expect(ago("2026-01-31T11:55:00Z", now)).toBe("5m ago");
    expect(ago("2026-01-31T09:00:00Z", now)).toBe("3h ago");
    expect(ago("2026-01-27T12:00:00Z", now)).toBe("4d ago");
    expect(ago("2026-01-31T12:02:00Z", now)).toBe("in 2m");
    expect(ago(new Date(now - 1000), now)).toBe("just now");
    expect(ago(null, now)).toBe("—");
    expect(ago("not a date", now)).toBe("—");
  });

  it("duration picks a readable precision", () => {
    expect(duration(850)).toBe("850ms");
    expect(duration(12_345)).toBe("12.3s");
    expect(duration(245_000)).toBe("4m 05s");
    expect(duration(7_380_000)).toBe("2h 03m");
    expect(duration(-1)).toBe("—");
    expect(duration(null)).toBe("—");
  });

  it("elapsed runs to now while the end is missing", () => {
    expect(elapsed("2026-01-31T11:59:00Z", "2026-01-31T11:59:30Z", now)).toBe("30.0s");
    expect(elapsed("2026-01-31T11:58:00Z", null, now)).toBe("2m 00s");
    expect(elapsed(null, null, now)).toBe("—");
  });

  it("bytes uses binary units", () => {
    expect(bytes(512)).toBe("512 B");
    expect(bytes(1536)).toBe("1.5 KiB");
    expect(bytes(80 * 1024 ** 3)).toBe("80 GiB");
    expect(megabytes(81_559)).toBe("80 GiB");
    expect(megabytes(24_105)).toBe("24 GiB");
    expect(bytes(Number.NaN)).toBe("—");
  });

  it("timestamp and shortId", () => {
    expect(timestamp(null)).toBe("—");
    expect(timestamp(new Date(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02 03:04:05");
    expect(shortId("d6606f81-e0da-4c07-8caa-cdf34314d059")).toBe("d6606f81");
    expect(shortId(null)).toBe("—");
  });

  it("formats figures", () => {
    expect([
      pct(0.625),
      pct(null),
      pp(0.375),
      pp(-0.05),
      interval(-0.1, 0.4),
      pValue(0.5),
      pValue(0.0123),
      pValue(0.0004),
    ]).toEqual(["62.5%", "—", "+37.5 pp", "−5.0 pp", "[−10.0 pp, +40.0 pp]", "0.50", "0.012", "< 0.001"]);
  });

  it("says a run's time left, or why it is unknown", () => {
    expect(timeLeftText({ kind: "estimate", totalS: 754, note: "" })).toMatch(/^≈ .+ left$/);
    expect(timeLeftText({ kind: "unknown", reason: "no agent is online" })).toBe(
      "time left unknown: no agent is online",
    );
    expect(timeLeftText(null)).toBeNull();
  });
});
