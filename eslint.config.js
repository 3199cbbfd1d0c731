// Lint rules that encode the architecture: dependency direction, config only in env.ts, no `!`.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const nodeBuiltins = ["node:*", "fs", "fs/*", "path", "child_process", "os", "net", "http", "https", "crypto", "zlib", "stream", "worker_threads"];
const banImports = (patterns, why) => ({
  "no-restricted-imports": ["error", { patterns: [{ group: patterns, message: why }] }],
});

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/.next/**", "**/.venv/**", ".agentlab/**", "drizzle/**", "apps/web/next-env.d.ts", "**/*.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", fetch: "readonly", AbortController: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", window: "readonly", document: "readonly", performance: "readonly", structuredClone: "readonly", queueMicrotask: "readonly", setImmediate: "readonly", Response: "readonly", Request: "readonly", Headers: "readonly", Blob: "readonly", File: "readonly", FormData: "readonly", crypto: "readonly", navigator: "readonly", localStorage: "readonly", ReadableStream: "readonly", DecompressionStream: "readonly", CompressionStream: "readonly" } },
    rules: {
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/consistent-type-definitions": ["error", "type"],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read configuration in the app's env.ts and pass it down." }],
    },
  },
  // Config is parsed in exactly one place per app (plus scripts/tests/bench, which are entry points).
  { files: ["**/env.ts", "scripts/**", "tests/**", "bench/**", "**/*.test.ts", "**/*.mjs", "**/*.config.*", "apps/agent/python/**"], rules: { "no-restricted-properties": "off" } },
  // Dependency direction: core <- db <- web, core <- agent. Nothing imports from apps/*.
  { files: ["packages/core/**/*.ts"], ignores: ["**/*.test.ts"], rules: banImports(["@agentlab/db", "@agentlab/db/*", "@agentlab/web", "@agentlab/web/*", "@agentlab/agent", "@agentlab/agent/*", ...nodeBuiltins], "core is pure: no I/O, no Node-only modules, no db or apps.") },
  { files: ["packages/db/**/*.ts"], rules: banImports(["@agentlab/web", "@agentlab/web/*", "@agentlab/agent", "@agentlab/agent/*", "**/apps/**"], "db depends on core only.") },
  { files: ["apps/agent/**/*.ts"], rules: banImports(["@agentlab/db", "@agentlab/db/*", "@agentlab/web", "@agentlab/web/*", "**/apps/web/**"], "the agent talks to the server over the wire; it depends on core only.") },
  { files: ["apps/web/**/*.ts", "apps/web/**/*.tsx"], rules: banImports(["@agentlab/agent", "@agentlab/agent/*", "**/apps/agent/**"], "web never imports the agent.") },
);
