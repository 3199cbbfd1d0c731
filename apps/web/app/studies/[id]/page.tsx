import type { Metadata } from "next";
import { StudyDetail } from "../StudyDetail";

export const metadata: Metadata = { title: "Study" };

export default async function StudyPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <StudyDetail id={id} />;
}
