import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import type { Env } from "../env";
import { createS3ArtifactStore } from "./s3-store";
import { createArtifactStore } from "./store";
import type { ArtifactStore } from "./types";

/** The artifact store env.ts selects: the data dir's `artifacts/` unless AGENTLAB_ARTIFACT_STORE=s3. */
export function artifactStoreFromEnv(env: Env): ArtifactStore {
  if (env.AGENTLAB_ARTIFACT_STORE === "local" || !env.AGENTLAB_S3_BUCKET)
    return createArtifactStore(join(env.AGENTLAB_DATA_DIR, "artifacts"));
  // Without explicit keys the SDK's default chain applies (env, profile, instance role).
  const credentials =
    env.AGENTLAB_S3_ACCESS_KEY_ID && env.AGENTLAB_S3_SECRET_ACCESS_KEY
      ? { accessKeyId: env.AGENTLAB_S3_ACCESS_KEY_ID, secretAccessKey: env.AGENTLAB_S3_SECRET_ACCESS_KEY }
      : undefined;
  const client = (endpoint: string | undefined) =>
    new S3Client({
      region: env.AGENTLAB_S3_REGION,
      endpoint,
      forcePathStyle: env.AGENTLAB_S3_FORCE_PATH_STYLE === "1",
      credentials,
    });
  const server = client(env.AGENTLAB_S3_ENDPOINT);
  return createS3ArtifactStore({
    client: server,
    presignClient: env.AGENTLAB_S3_PUBLIC_ENDPOINT ? client(env.AGENTLAB_S3_PUBLIC_ENDPOINT) : server,
    bucket: env.AGENTLAB_S3_BUCKET,
    partBytes: env.AGENTLAB_S3_PART_BYTES,
    urlTtlS: env.AGENTLAB_S3_URL_TTL_S,
  });
}
