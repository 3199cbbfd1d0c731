import type { Metadata } from "next";
import { StudiesView } from "./StudiesView";

export const metadata: Metadata = { title: "Studies" };

export default function StudiesPage() {
  return <StudiesView />;
}
