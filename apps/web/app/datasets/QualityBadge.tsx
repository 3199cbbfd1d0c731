import { DATA_QUALITY_LABELS, type SnapshotQuality } from "@agentlab/core";
import { Badge } from "../_components/Badge";

/** What a snapshot's answers had to be to get in; shown only when it is not the verified default. */
export function QualityBadge({ quality }: { quality: SnapshotQuality }) {
  if (quality === "verified") return null;
  return (
    <Badge tone={quality === "shuffled_control" ? "violet" : "red"} title="Answers not verified by the hidden tests">
      {DATA_QUALITY_LABELS[quality]}
    </Badge>
  );
}
