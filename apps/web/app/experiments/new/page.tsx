import type { Metadata } from "next";
import { CreateExperiment } from "../CreateExperiment";
import { FieldLabels } from "../../_components/FieldLabels";

export const metadata: Metadata = { title: "New experiment" };

/** `?split=ID` (the split page's "Start an experiment on this split") preselects that split. */
export default async function NewExperimentPage({ searchParams }: { searchParams: Promise<{ split?: string }> }) {
  const { split } = await searchParams;
  return (
    <FieldLabels>
      <CreateExperiment splitId={typeof split === "string" ? split : undefined} />
    </FieldLabels>
  );
}
