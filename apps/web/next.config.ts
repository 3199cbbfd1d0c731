import type { NextConfig } from "next";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The repo root holds the one package-lock; tracing and Turbopack must resolve from there,
// not from apps/web, or Next guesses the workspace root and warns.
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const config: NextConfig = {
  // Pages import zod schemas and enums from core's TypeScript sources.
  transpilePackages: ["@agentlab/core"],
  turbopack: { root: repoRoot },
  outputFileTracingRoot: repoRoot,
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
