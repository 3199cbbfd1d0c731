import type { Metadata } from "next";
import { PoolDetail } from "../PoolDetail";

export const metadata: Metadata = { title: "Pool" };

export default async function PoolPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <PoolDetail id={id} />;
}
