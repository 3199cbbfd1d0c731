import { z } from "zod";
import { parseTrustedProxies } from "./auth/client-ip";

// The only place the web app reads process.env: parsed once, fails fast with every problem listed.
const Env = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("production"),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().default("0.0.0.0"),
    DATABASE_URL: z.string().url().optional(),
    AGENTLAB_DATA_DIR: z.string().default(".agentlab"),
    AGENTLAB_PUBLIC_URL: z.string().url().optional(),
    // Load balancers in front of this instance (comma-separated addresses or CIDR ranges): only from
    // these is X-Forwarded-For believed, for the login rate limits (auth/client-ip.ts). Unset: ignored.
    AGENTLAB_TRUSTED_PROXIES: z
      .string()
      .optional()
      .superRefine((v, ctx) => {
        try {
          parseTrustedProxies(v);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: err instanceof Error ? err.message : String(err) });
        }
      }),
    // "0": the API, tRPC and the agents' endpoint without the Next pages (an API-only instance).
    AGENTLAB_DASHBOARD: z.enum(["0", "1"]).default("1"),
    // Encrypts provider API keys at rest; generated and stored under the data dir when absent.
    AGENTLAB_SECRET: z.string().min(32).optional(),
    AGENTLAB_LOCAL_AGENT: z.enum(["0", "1"]).default("1"),
    AGENTLAB_LEASE_TTL_MS: z.coerce.number().int().positive().default(30_000),
    AGENTLAB_HEARTBEAT_MS: z.coerce.number().int().positive().default(10_000),
    // The background loops run on the queue's events; this slow sweep only catches missed notifications.
    AGENTLAB_SWEEP_MS: z.coerce.number().int().positive().default(30_000),
    // Followers try to take the background loops over this often (a dead leader's lock is free at once).
    AGENTLAB_LEADER_RETRY_MS: z.coerce.number().int().positive().default(5_000),
    AGENTLAB_MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(2 * 1024 * 1024),
    AGENTLAB_MAX_UPLOAD_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(512 * 1024 * 1024),
    // Per agent: bytes held in unfinished uploads, how many may be open, and when one expires.
    AGENTLAB_UPLOAD_QUOTA_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(2 * 1024 * 1024 * 1024),
    AGENTLAB_MAX_OPEN_UPLOADS: z.coerce.number().int().positive().default(16),
    AGENTLAB_UPLOAD_EXPIRY_MS: z.coerce
      .number()
      .int()
      .positive()
      .default(24 * 3600 * 1000),
    // Where artifacts live: the data dir (default) or an S3-compatible bucket (artifacts/from-env.ts).
    AGENTLAB_ARTIFACT_STORE: z.enum(["local", "s3"]).default("local"),
    AGENTLAB_S3_BUCKET: z.string().min(1).optional(),
    AGENTLAB_S3_ENDPOINT: z.string().url().optional(),
    // The endpoint agents reach the storage at, when it differs from the server's (presigned URLs name it).
    AGENTLAB_S3_PUBLIC_ENDPOINT: z.string().url().optional(),
    AGENTLAB_S3_REGION: z.string().default("us-east-1"),
    AGENTLAB_S3_ACCESS_KEY_ID: z.string().optional(),
    AGENTLAB_S3_SECRET_ACCESS_KEY: z.string().optional(),
    // MinIO, moto and most self-hosted servers want path-style URLs (http://host/bucket/key).
    AGENTLAB_S3_FORCE_PATH_STYLE: z.enum(["0", "1"]).default("0"),
    AGENTLAB_S3_PART_BYTES: z.coerce
      .number()
      .int()
      .min(5 * 1024 * 1024)
      .default(8 * 1024 * 1024),
    AGENTLAB_S3_URL_TTL_S: z.coerce.number().int().positive().default(3600),
    // Passed on to the local agent's process.
    PATH: z.string().default("/usr/local/bin:/usr/bin:/bin"),
    HOME: z.string().default("/tmp"),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .refine((e) => e.AGENTLAB_ARTIFACT_STORE !== "s3" || e.AGENTLAB_S3_BUCKET, {
    path: ["AGENTLAB_S3_BUCKET"],
    message: "required when AGENTLAB_ARTIFACT_STORE=s3",
  });
export type Env = z.infer<typeof Env>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const parsed = Env.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n");
    throw new Error(`invalid environment:\n${lines}`);
  }
  return parsed.data;
}
