"use client";

import { use } from "react";
import { ExperimentDetail } from "../ExperimentDetail";

export default function ExperimentPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = use(params);
  return <ExperimentDetail id={id} />;
}
