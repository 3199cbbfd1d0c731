import type { Metadata } from "next";
import { CreateExperiment } from "../CreateExperiment";

export const metadata: Metadata = { title: "New experiment" };

export default function NewExperimentPage() {
  return <CreateExperiment />;
}
