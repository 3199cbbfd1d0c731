"use client";

import { Suspense, use } from "react";
import { PairBrowser } from "./PairBrowser";

// The browser reads its filters from the URL; the boundary keeps the page statically buildable.
export default function PairsPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = use(params);
  return (
    <Suspense>
      <PairBrowser experimentId={id} />
    </Suspense>
  );
}
