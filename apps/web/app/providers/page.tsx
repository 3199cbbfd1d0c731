import type { Metadata } from "next";
import { ProvidersView } from "./ProvidersView";

export const metadata: Metadata = { title: "Teacher providers" };

export default function ProvidersPage() {
  return <ProvidersView />;
}
