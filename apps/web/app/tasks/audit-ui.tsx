import { Badge, type Tone } from "../_components/Badge";

// Audit vocabulary shared by the task page and the pool view.

export const AUDIT_STATES = ["none", "pending", "passed", "failed", "error"] as const;
export type AuditState = (typeof AUDIT_STATES)[number];

const tone: Record<AuditState, Tone> = {
  none: "neutral",
  pending: "blue",
  passed: "green",
  failed: "red",
  error: "amber",
};
const label: Record<AuditState, string> = {
  none: "not audited",
  pending: "auditing",
  passed: "admitted",
  failed: "rejected",
  error: "audit error",
};

export function AuditBadge({ state }: { state: AuditState }) {
  return (
    <Badge tone={tone[state]} dot pulse={state === "pending"}>
      {label[state]}
    </Badge>
  );
}

/** The `process` backend has no namespaces, cgroup or uid drop: results graded by it say so everywhere. */
export function UnsandboxedBadge() {
  return (
    <Badge tone="amber" title="graded by the process backend: no namespaces, no cgroup, no uid drop">
      unsandboxed
    </Badge>
  );
}

export const auditStateLabel = (s: AuditState) => label[s];

export const formatScore = (score: number | null | undefined) =>
  score === null || score === undefined ? "—" : `${(score * 100).toFixed(0)}%`;

/** Opt-in to the unsandboxed `process` backend for an audit run; its results are marked as such. */
export function ProcessBackendToggle({
  checked,
  onChange,
}: {
  checked: boolean;
  onChange: (checked: boolean) => void;
}) {
  return (
    <label
      className="flex items-center gap-1 text-xs text-zinc-600"
      title="the process backend is not a sandbox; its audits are marked unsandboxed"
    >
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> process backend
    </label>
  );
}
