import type { Metadata } from "next";
import { Suspense } from "react";
import { JobsView } from "./JobsView";

export const metadata: Metadata = { title: "Jobs" };

// JobsView reads the state filter from the URL; the boundary keeps the page statically buildable.
export default function JobsPage() {
  return (
    <Suspense>
      <JobsView />
    </Suspense>
  );
}
