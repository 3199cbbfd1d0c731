import type { Metadata } from "next";
import { EpisodeDetail } from "../EpisodeDetail";

export const metadata: Metadata = { title: "Episode" };

export default async function EpisodePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <EpisodeDetail id={id} />;
}
