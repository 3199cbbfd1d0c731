import type { Metadata } from "next";
import { Overview } from "./_components/overview/Overview";

export const metadata: Metadata = { title: "Overview" };

export default function HomePage() {
  return <Overview />;
}
