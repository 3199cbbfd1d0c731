import { recordArtifactBlob } from "@agentlab/db";
import type { Services } from "../services";

/** Stores bytes the server made (a dataset export, a corpus) as a content-addressed artifact agents can fetch. */
export async function publishBlob(services: Services, body: Buffer): Promise<string> {
  const sha = await services.artifacts.put(body);
  await recordArtifactBlob(services.db, sha, body.length);
  return sha;
}
