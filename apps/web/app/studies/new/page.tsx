import type { Metadata } from "next";
import { FieldLabels } from "../../_components/FieldLabels";
import { CreateStudy } from "../CreateStudy";

export const metadata: Metadata = { title: "New study" };

export default function NewStudyPage() {
  return (
    <FieldLabels>
      <CreateStudy />
    </FieldLabels>
  );
}
