// Lint rules that encode the architecture: dependency direction (by import name and by resolved
// path), config only in env.ts, no `!`, React hooks and Next rules for the UI. Import circles are
// checked by scripts/check-cycles.ts (type-only imports included, which import-x's no-cycle skips).
import js from "@eslint/js";
import nextPlugin from "@next/eslint-plugin-next";
import { createNodeResolver, importX } from "eslint-plugin-import-x";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

const nodeBuiltins = [
  "node:*",
  "fs",
  "fs/*",
  "path",
  "child_process",
  "os",
  "net",
  "http",
  "https",
  "crypto",
  "zlib",
  "stream",
  "worker_threads",
];
const banImports = (patterns, why, ...more) => ({
  "no-restricted-imports": [
    "error",
    { patterns: [{ group: patterns, message: why }, ...more.map(([group, message]) => ({ group, message }))] },
  ],
});
// SQL and row types live in packages/db: the apps call its query functions.
const noSql = [["drizzle-orm", "drizzle-orm/*"], "SQL lives in packages/db: add a query function there and call it."];

// The layer rule on resolved paths: it also catches relative imports that climb into another
// layer (`../../apps/web/...`) and workspace imports, whatever their spelling.
const layers = [
  {
    target: "./packages/core",
    from: ["./packages/db", "./apps"],
    message: "core is pure: it imports neither db nor apps.",
  },
  { target: "./packages/db", from: ["./apps"], message: "db depends on core only." },
  {
    target: "./apps/agent",
    from: ["./apps/web", "./packages/db"],
    message: "the agent talks to the server over the wire; it depends on core only.",
  },
  { target: "./apps/web", from: ["./apps/agent"], message: "web never imports the agent." },
];

// apps/web/server, top to bottom: a file imports only from its own layer or the layers below it,
// so the composition root is the one place that sees everything and a low-level module never
// reaches back up into what is built on it (import circles are scripts/check-cycles.ts's).
const serverLayers = [
  { name: "root", paths: ["main.ts", "app.ts", "background.ts"] },
  // tRPC routers, HTTP handlers, the agents' socket, whoami and reaper.
  { name: "endpoints", paths: ["routers", "http", "agents"] },
  { name: "trpc", paths: ["trpc"] },
  { name: "models", paths: ["models"] },
  // Studies run their arms as experiments and hold their test stage (evaluation.ts asks the study);
  // episodes store the episode jobs' results beside them.
  { name: "experiments", paths: ["experiments", "studies", "episodes"] },
  { name: "teacher", paths: ["teacher", "audits", "bootstrap"] },
  // Batched grading with retries alone, shared by experiments and teacher collections.
  { name: "grading", paths: ["grading"] },
  // The services every layer is handed, and the adapters they are made of (imports: the task
  // import's worker thread).
  {
    name: "base",
    paths: ["services.ts", "env.ts", "queue.ts", "logger.ts", "artifacts", "auth", "events", "imports"],
  },
];
const serverPath = (p) => `./apps/web/server/${p}`;
const serverZones = serverLayers.slice(1).map((layer, i) => ({
  target: layer.paths.map(serverPath),
  from: serverLayers.slice(0, i + 1).flatMap((l) => l.paths.map(serverPath)),
  message: `server layer "${layer.name}" imports only from its own layer and below, not from ${serverLayers
    .slice(0, i + 1)
    .map((l) => `"${l.name}"`)
    .join(", ")}: move what both need down (docs/architecture.md, "Server layers").`,
}));
// Pages (apps/web/app) and the CLI share code through apps/web/client only; the client library and
// the server import neither of them.
const webZones = [
  {
    target: "./apps/web/cli",
    from: "./apps/web/app",
    message: "the CLI does not import page code: move what both need to apps/web/client.",
  },
  {
    target: "./apps/web/client",
    from: ["./apps/web/app", "./apps/web/cli", "./apps/web/server"],
    message: "apps/web/client is the library pages and CLI share: it imports neither them nor the server.",
  },
  {
    target: "./apps/web/server",
    from: ["./apps/web/app", "./apps/web/cli", "./apps/web/client"],
    message: "the server imports no page, CLI or client code.",
  },
];

export default tseslint.config(
  // tests/tooling/fixtures hold deliberate violations that tests/tooling/lint-rules.test.ts lints on purpose.
  {
    ignores: [
      "**/node_modules/**",
      "**/.next/**",
      "**/.venv/**",
      ".agentlab/**",
      "drizzle/**",
      "test-results/**",
      "tests/tooling/fixtures/**",
      "apps/web/next-env.d.ts",
      "**/*.d.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        fetch: "readonly",
        AbortController: "readonly",
        TextEncoder: "readonly",
        TextDecoder: "readonly",
        window: "readonly",
        document: "readonly",
        performance: "readonly",
        structuredClone: "readonly",
        queueMicrotask: "readonly",
        setImmediate: "readonly",
        Response: "readonly",
        Request: "readonly",
        Headers: "readonly",
        Blob: "readonly",
        File: "readonly",
        FormData: "readonly",
        crypto: "readonly",
        navigator: "readonly",
        localStorage: "readonly",
        ReadableStream: "readonly",
        DecompressionStream: "readonly",
        CompressionStream: "readonly",
      },
    },
    plugins: { "import-x": importX },
    settings: {
      "import-x/resolver-next": [createNodeResolver({ extensions: [".ts", ".tsx", ".mjs", ".js", ".json"] })],
    },
    rules: {
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/consistent-type-definitions": ["error", "type"],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration in the app's env.ts and pass it down." },
      ],
      "import-x/no-restricted-paths": ["error", { zones: [...layers, ...serverZones, ...webZones] }],
    },
  },
  // Config is parsed in exactly one place per app (plus scripts/tests/bench, which are entry points).
  {
    files: [
      "**/env.ts",
      "scripts/**",
      "tests/**",
      "bench/**",
      "**/*.test.ts",
      "**/*.mjs",
      "**/*.config.*",
      "apps/agent/python/**",
    ],
    rules: { "no-restricted-properties": "off" },
  },
  // Dependency direction by import name: core <- db <- web, core <- agent. Nothing imports from apps/*.
  {
    files: ["packages/core/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: banImports(
      [
        "@agentlab/db",
        "@agentlab/db/*",
        "@agentlab/web",
        "@agentlab/web/*",
        "@agentlab/agent",
        "@agentlab/agent/*",
        ...nodeBuiltins,
      ],
      "core is pure: no I/O, no Node-only modules, no db or apps.",
    ),
  },
  {
    files: ["packages/db/**/*.ts"],
    rules: banImports(
      ["@agentlab/web", "@agentlab/web/*", "@agentlab/agent", "@agentlab/agent/*", "**/apps/**"],
      "db depends on core only.",
    ),
  },
  {
    files: ["apps/agent/**/*.ts"],
    rules: banImports(
      ["@agentlab/db", "@agentlab/db/*", "@agentlab/web", "@agentlab/web/*", "**/apps/web/**"],
      "the agent talks to the server over the wire; it depends on core only.",
      noSql,
    ),
  },
  {
    files: ["apps/web/**/*.ts", "apps/web/**/*.tsx"],
    rules: banImports(
      ["@agentlab/agent", "@agentlab/agent/*", "**/apps/agent/**"],
      "web never imports the agent.",
      noSql,
    ),
  },
  // The UI: hooks rules (including the React Compiler checks) and Next's own rules.
  {
    files: ["apps/web/app/**/*.ts", "apps/web/app/**/*.tsx"],
    plugins: { "react-hooks": reactHooks, "@next/next": nextPlugin },
    settings: { next: { rootDir: "apps/web/" } },
    rules: { ...reactHooks.configs.flat.recommended.rules, ...nextPlugin.configs.recommended.rules },
  },
);
