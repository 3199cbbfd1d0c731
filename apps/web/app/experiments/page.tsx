import type { Metadata } from "next";
import { Suspense } from "react";
import { ExperimentsView } from "./ExperimentsView";

export const metadata: Metadata = { title: "Experiments" };

// The runs table keeps its filters in the URL; the boundary keeps the page statically buildable.
export default function ExperimentsPage() {
  return (
    <Suspense>
      <ExperimentsView />
    </Suspense>
  );
}
