// Display formatting shared by the pages. Dates arrive from tRPC as ISO strings (no transformer).
export type DateLike = string | Date | null | undefined;

const toDate = (d: DateLike): Date | null => {
  if (d === null || d === undefined || d === "") return null;
  const date = d instanceof Date ? d : new Date(d);
  return Number.isNaN(date.getTime()) ? null : date;
};

/** "12s ago", "5m ago", "3h ago", "4d ago"; "in 2m" for future times; "—" for none. */
export function ago(d: DateLike, now: number = Date.now()): string {
  const date = toDate(d);
  if (!date) return "—";
  const diffS = Math.round((now - date.getTime()) / 1000);
  const abs = Math.abs(diffS);
  const span =
    abs < 60
      ? `${abs}s`
      : abs < 3600
        ? `${Math.floor(abs / 60)}m`
        : abs < 86_400
          ? `${Math.floor(abs / 3600)}h`
          : `${Math.floor(abs / 86_400)}d`;
  if (abs < 2) return "just now";
  return diffS >= 0 ? `${span} ago` : `in ${span}`;
}

/** "2026-01-31 14:05:09" in the browser's time zone, for tooltips and detail pages. */
export function timestamp(d: DateLike): string {
  const date = toDate(d);
  if (!date) return "—";
  const p = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/** "850ms", "12.3s", "4m 05s", "2h 03m". */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const total = Math.floor(s);
  const [h, m, sec] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  const p = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}h ${p(m)}m` : `${m}m ${p(sec)}s`;
}

/** Elapsed time between two instants, or until now while the second is missing. */
export function elapsed(from: DateLike, to: DateLike, now: number = Date.now()): string {
  const a = toDate(from);
  if (!a) return "—";
  const b = toDate(to)?.getTime() ?? now;
  return duration(b - a.getTime());
}

/** Binary units: 1536 → "1.5 KiB". */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n) || n < 0) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export const megabytes = (mb: number | null | undefined): string =>
  mb === null || mb === undefined ? "—" : bytes(mb * 1024 * 1024);

/** First 8 characters of a uuid or hash: enough to tell rows apart on screen. */
export const shortId = (id: string | null | undefined): string => (id ? id.slice(0, 8) : "—");

/** "$0.0123" below a dollar, "$12.34" above. */
export const usd = (n: number): string => `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`;

// Rates and differences of rates, as the runs table, the comparison page and the CLI print them.
export const pct = (x: number | null | undefined): string =>
  x === null || x === undefined ? "—" : `${(x * 100).toFixed(1)}%`;

/** Percentage points with a sign: +37.5 pp. */
export const pp = (x: number | null | undefined): string =>
  x === null || x === undefined ? "—" : `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)} pp`;

export const interval = (lo: number | null, hi: number | null): string =>
  lo === null || hi === null ? "" : `[${pp(lo)}, ${pp(hi)}]`;

/** p to two significant digits; below 0.001 as "< 0.001". */
export function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined) return "—";
  if (p < 0.001) return "< 0.001";
  return p >= 0.1 ? p.toFixed(2) : p.toPrecision(2);
}

/** A running experiment's time left (core remainingTime) in one phrase; the reason when there is no estimate. */
export function timeLeftText(
  r: { kind: "estimate"; totalS: number; note: string } | { kind: "unknown"; reason: string } | null,
): string | null {
  if (!r) return null;
  return r.kind === "estimate" ? `≈ ${duration(r.totalS * 1000)} left` : `time left unknown: ${r.reason}`;
}
