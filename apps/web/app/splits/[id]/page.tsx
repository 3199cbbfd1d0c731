import type { Metadata } from "next";
import { SplitDetail } from "../SplitDetail";

export const metadata: Metadata = { title: "Split" };

export default async function SplitPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <SplitDetail id={id} />;
}
