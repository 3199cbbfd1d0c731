import { RUN_SORT_KEYS, type RunListInput, type RunSortKey } from "@agentlab/core/experiments/runs";
import { EXPERIMENT_STATES } from "@agentlab/core/experiments/stages";

// The runs table's filter/sort/page state as URL parameters (so a view can be linked and survives
// reload). Pure, unit-tested. Its figures are formatted by client/format.ts, shared with the CLI.

export type RunsView = {
  q: string;
  state: string;
  outcome: string;
  tag: string;
  archived: boolean;
  sort: RunSortKey;
  dir: "asc" | "desc";
  page: number;
};
export const PAGE_SIZE = 50;
export const defaultView: RunsView = {
  q: "",
  state: "",
  outcome: "",
  tag: "",
  archived: false,
  sort: "createdAt",
  dir: "desc",
  page: 0,
};

const isSort = (s: string | null): s is RunSortKey => s !== null && (RUN_SORT_KEYS as readonly string[]).includes(s);

export function viewFromParams(p: URLSearchParams): RunsView {
  const page = Number(p.get("page") ?? "0");
  const sort = p.get("sort");
  return {
    q: p.get("q") ?? "",
    state: p.get("state") ?? "",
    outcome: p.get("outcome") ?? "",
    tag: p.get("tag") ?? "",
    archived: p.get("archived") === "1",
    sort: isSort(sort) ? sort : "createdAt",
    dir: p.get("dir") === "asc" ? "asc" : "desc",
    page: Number.isInteger(page) && page > 0 ? page : 0,
  };
}

export function viewToParams(v: RunsView): string {
  const p = new URLSearchParams();
  if (v.q) p.set("q", v.q);
  if (v.state) p.set("state", v.state);
  if (v.outcome) p.set("outcome", v.outcome);
  if (v.tag) p.set("tag", v.tag);
  if (v.archived) p.set("archived", "1");
  if (v.sort !== "createdAt") p.set("sort", v.sort);
  if (v.dir !== "desc") p.set("dir", v.dir);
  if (v.page > 0) p.set("page", String(v.page));
  return p.toString();
}

const STATES = EXPERIMENT_STATES;
const OUTCOMES = ["adapter_selected", "base_kept"] as const;

/** The API input for a view; unknown filter values (a hand-edited URL) are dropped, not sent. */
export function viewToInput(v: RunsView): RunListInput {
  const state = STATES.find((s) => s === v.state);
  const outcome = OUTCOMES.find((o) => o === v.outcome);
  return {
    ...(v.q.trim() ? { q: v.q.trim() } : {}),
    ...(state ? { state } : {}),
    ...(outcome ? { outcome } : {}),
    ...(v.tag ? { tag: v.tag } : {}),
    archived: v.archived,
    sort: v.sort,
    dir: v.dir,
    limit: PAGE_SIZE,
    offset: v.page * PAGE_SIZE,
  };
}

/** Clicking a header: the same column flips direction; a new one starts descending (names ascending). */
export function toggleSort(v: RunsView, key: RunSortKey): RunsView {
  if (v.sort === key) return { ...v, dir: v.dir === "asc" ? "desc" : "asc", page: 0 };
  return { ...v, sort: key, dir: key === "name" || key === "baseModel" ? "asc" : "desc", page: 0 };
}

/** "51–100 of 123". */
export function pageLabel(page: number, shown: number, total: number): string {
  if (total === 0) return "0 runs";
  const from = page * PAGE_SIZE + 1;
  return `${Math.min(from, total)}–${Math.min(from + shown - 1, total)} of ${total}`;
}
