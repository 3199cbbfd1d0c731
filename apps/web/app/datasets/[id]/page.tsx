import type { Metadata } from "next";
import { DatasetDetail } from "../DatasetDetail";

export const metadata: Metadata = { title: "SFT dataset" };

export default async function DatasetPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <DatasetDetail id={id} />;
}
