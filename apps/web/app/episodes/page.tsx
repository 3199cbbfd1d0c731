import type { Metadata } from "next";
import { EpisodesView, type EpisodeScope } from "./EpisodesView";

export const metadata: Metadata = { title: "Episodes" };

type Params = { experiment?: string; collection?: string; split?: string; all?: string };

export default async function EpisodesPage({ searchParams }: { searchParams: Promise<Params> }) {
  const p = await searchParams;
  const scope: EpisodeScope = p.experiment
    ? { kind: "experiment", id: p.experiment }
    : p.collection
      ? { kind: "collection", id: p.collection }
      : p.split
        ? { kind: "split", id: p.split }
        : { kind: "all" };
  return <EpisodesView scope={scope} all={p.all === "1"} />;
}
