import type { Metadata } from "next";
import { SplitsView } from "./SplitsView";

export const metadata: Metadata = { title: "Splits" };

export default function SplitsPage() {
  return <SplitsView />;
}
