// What a share link shows of a report: its facts, not the lab's internals. Whoever holds the link
// is outside the workspace, so the report's header loses the agents' ids and names, their kernel
// (the release in `os`) and RAM, the base model's local path (its folder name stays), the SFT
// dataset's hash, and the teacher provider's id; any `agentId`/`agentName` field elsewhere goes
// too. The shapes stay (the same page renders both), only the values change.

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export const NOT_SHARED = "(not shared)";
const AGENT_KEYS = new Set(["agentId", "agentName", "agentIds", "agentNames"]);

/** The last segment of a local path (`/models/qwen-0.5b/` → `qwen-0.5b`). */
const folderName = (path: string) => path.split(/[\\/]/).filter(Boolean).pop() ?? NOT_SHARED;

function dropAgentKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropAgentKeys);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !AGENT_KEYS.has(k))
      .map(([k, x]) => [k, dropAgentKeys(x)]),
  );
}

const localPath = (model: unknown): string | null =>
  isObject(model) && model.source === "path" && typeof model.ref === "string" ? model.ref : null;

/** Every string with the values in `swap` replaced: long ones (ids, paths, hashes) anywhere, short ones whole. */
function swapStrings(v: unknown, swap: Map<string, string>): unknown {
  if (typeof v === "string") {
    const whole = swap.get(v);
    if (whole !== undefined) return whole;
    let out = v;
    for (const [from, to] of swap) if (from.length >= 8 && out.includes(from)) out = out.split(from).join(to);
    return out;
  }
  if (Array.isArray(v)) return v.map((x) => swapStrings(x, swap));
  if (!isObject(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swapStrings(x, swap)]));
}

/** A copy of a stored report as a share link shows it. */
export function shareableReport<T>(report: T): T {
  const copy = dropAgentKeys(JSON.parse(JSON.stringify(report)));
  if (!isObject(copy)) return copy as T;
  const config = isObject(copy.config) ? copy.config : {};
  const header = isObject(copy.header) ? copy.header : {};
  // The values to hide, wherever they were copied to (a protocol's model ref, a job's payload…).
  const swap = new Map<string, string>();
  for (const path of [localPath(config.baseModel), localPath(header.baseModel)])
    if (path) swap.set(path, folderName(path));
  if (isObject(config.teacher) && typeof config.teacher.providerId === "string")
    swap.set(config.teacher.providerId, NOT_SHARED);
  if (isObject(header.dataset) && typeof header.dataset.hash === "string") swap.set(header.dataset.hash, NOT_SHARED);
  const hardware = Array.isArray(header.hardware) ? header.hardware : [];
  hardware.forEach((a: unknown, i) => {
    if (!isObject(a)) return;
    if (typeof a.id === "string") swap.set(a.id, `agent-${i + 1}`);
    if (typeof a.name === "string") swap.set(a.name, `agent ${i + 1}`);
  });
  const out = swapStrings(copy, swap);
  if (isObject(out) && isObject(out.header) && Array.isArray(out.header.hardware))
    out.header.hardware = out.header.hardware.map((a: unknown) =>
      // The OS without its kernel release, and no RAM figure.
      isObject(a) ? { ...a, os: typeof a.os === "string" ? (a.os.split(" ")[0] ?? null) : null, ramMb: null } : a,
    );
  return out as T;
}
