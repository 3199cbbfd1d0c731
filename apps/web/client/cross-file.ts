// Cross-file tasks (the reference fix reads a dependency file's symbol) as the task page, the pool
// view and the CLI word them, from what admission audits recorded.

/** A task's recorded uses: "limits.LIMIT", "none", or "not recorded" for an audit from before they were. */
export const crossFileUsesText = (uses: readonly string[] | undefined): string =>
  uses === undefined ? "not recorded" : uses.length === 0 ? "none" : uses.join(", ");

const count = (n: number, one: string) => `${n.toLocaleString("en-US")} ${one}${n === 1 ? "" : "s"}`;

/** A pool's count: "210 tasks in 210 groups", with "(5 not known yet)" for tasks no audit has recorded. */
export function crossFileCountText(c: { tasks: number; groups: number; unknown: number }): string {
  const known = `${count(c.tasks, "task")} in ${count(c.groups, "group")}`;
  return c.unknown > 0 ? `${known} (${count(c.unknown, "task")} not known yet)` : known;
}
