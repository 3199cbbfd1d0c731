import type { Metadata } from "next";
import { DatasetsView } from "./DatasetsView";

export const metadata: Metadata = { title: "SFT datasets" };

export default function DatasetsPage() {
  return <DatasetsView />;
}
