import type { Metadata } from "next";
import { CreateExperiment } from "../CreateExperiment";
import { FieldLabels } from "../../_components/FieldLabels";

export const metadata: Metadata = { title: "New experiment" };

/**
 * `?split=ID` (the split page's "Start an experiment on this split") preselects that split;
 * `?preset=cpu-demo` (the first-run checklist) applies the CPU demo preset.
 */
export default async function NewExperimentPage({
  searchParams,
}: {
  searchParams: Promise<{ split?: string; preset?: string }>;
}) {
  const { split, preset } = await searchParams;
  return (
    <FieldLabels>
      <CreateExperiment
        splitId={typeof split === "string" ? split : undefined}
        preset={preset === "cpu-demo" ? "cpu-demo" : undefined}
      />
    </FieldLabels>
  );
}
