import Link from "next/link";
import { testReadsText, type TestReads } from "@agentlab/core";
import { Badge } from "../_components/Badge";

// The split's test-read ledger: on the report and share pages (without links) and on the split page.

export function TestReadsList({
  reads,
  links = false,
  currentExperimentId,
}: {
  reads: TestReads;
  links?: boolean;
  currentExperimentId?: string;
}) {
  return (
    <div className="space-y-2 text-[13px]" data-testid="test-reads">
      <p>
        <Badge tone={reads.count > 1 ? "amber" : "neutral"}>read {reads.count}×</Badge>{" "}
        {reads.final ? <Badge tone="violet">final</Badge> : null} {testReadsText(reads)}
      </p>
      {reads.claims.length > 0 && (
        <ol className="list-decimal space-y-1 pl-5">
          {reads.claims.map((c, i) => (
            <li key={`${c.experimentId ?? c.studyId ?? "gone"}:${i}`}>
              <span className="tabular-nums text-zinc-500">{new Date(c.claimedAt).toLocaleString()}</span>{" "}
              {links && c.experimentId ? (
                <Link className="text-blue-700 hover:underline" href={`/experiments/${c.experimentId}`}>
                  {c.claimerName}
                </Link>
              ) : (
                <span>{c.studyId ? `study ${c.studyId}` : c.claimerName}</span>
              )}
              {c.experimentId && c.experimentId === currentExperimentId ? " (this report)" : ""}
              {c.claimedBy ? ` by ${c.claimedBy}` : ""}: {c.models.join(" vs ")}{" "}
              <span className="font-mono text-xs text-zinc-500" title={c.recipeHash}>
                recipe {c.recipeHash.slice(0, 12)}
              </span>
              {c.override && (
                <span className="ml-1 text-amber-800" data-testid="test-read-override">
                  — read after the split was final, override by {c.override.by ?? "an admin"}: “{c.override.reason}”
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
