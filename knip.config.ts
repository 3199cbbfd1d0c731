// `npm run knip`: unused files, exports and dependencies, per npm workspace. Entry points are the
// processes (server, agent, CLIs, scripts, benches) and the tests; Next's pages are found by knip's
// Next plugin, Vitest and ESLint configs by theirs. A `!` marks production code: the `--strict` pass
// (production only) checks that it imports only what its own workspace declares.
import type { KnipConfig } from "knip";

const config: KnipConfig = {
  // An export used only inside its own file is visibility, not dead code; report only code nobody uses.
  ignoreExportsUsedInFile: true,
  // Debian's package manager, called by scripts/start.mjs only when it runs as root with apt.
  ignoreBinaries: ["apt-get"],
  workspaces: {
    ".": {
      entry: ["scripts/*.{ts,mjs}", "bench/*.ts", "tests/**/*.test.ts"],
      project: ["scripts/**/*.{ts,mjs}", "bench/**/*.ts", "tests/**/*.ts"],
      ignore: ["tests/tooling/fixtures/**"],
    },
    "packages/core": { project: ["src/**/*.ts!"] },
    "packages/db": { project: ["src/**/*.ts!", "*.ts"] },
    "apps/web": {
      entry: ["cli/main.ts!", "bin/*.mjs!"],
      project: ["app/**/*.{ts,tsx,css}!", "server/**/*.ts!", "cli/**/*.ts!", "client/**/*.ts!"],
    },
    "apps/agent": { entry: ["src/main.ts!", "bin/*.mjs!"], project: ["src/**/*.ts!"] },
  },
  // Tailwind 4 is imported from CSS (`@import "tailwindcss"` in apps/web/app); knip reads only the
  // @import lines. Compilers are global, so knip hints that core/db/agent do not include .css:
  // `npm run knip` passes --no-config-hints; run `npx knip` after changing this file.
  compilers: {
    css: (text: string) =>
      [...text.matchAll(/@import\s+["']([^"']+)["']/g)].map(([, spec]) => `import "${spec}";`).join("\n"),
  },
};

export default config;
