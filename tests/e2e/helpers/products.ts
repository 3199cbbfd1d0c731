import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startProductProcess, type ProductInfo, type ProductProcess } from "./product-process";

// The products of one e2e run. Starting one costs 20–30 s on the 2-core box, so the files share
// them: a shared product is started once and serves every file that asks for it, each file
// scoping what it asserts to its own rows (its own pool, split, experiment and admin names). A lab
// whose global state a file asserts (the unspent first-admin link, the empty first-run
// checklist, an only agent whose self-test fails) is that file's alone and stops when the file
// releases it.
//
// The global setup (helpers/global-setup.ts) serves them over a small HTTP endpoint on 127.0.0.1:
// a file's useProduct(name) (helpers/app.ts) asks for one and gets its ProductInfo once it runs.
// The products the run's files name are started ahead, one at a time (a file that asks for one not
// yet started starts it at once), while earlier files run.

export const PRODUCTS = {
  /** With its local agent; shared. */
  lab: { env: {}, shared: true },
  /** Without a local agent (jobs answered by the tests' simulated agents); shared. */
  api: { env: { AGENTLAB_LOCAL_AGENT: "0" }, shared: true },
  /** With its local agent, nobody signed up yet: the one-time first-admin link unspent. */
  "first-run": { env: {}, shared: false },
  /** No agent and no provider: the first-run checklist of a new install. */
  empty: { env: { AGENTLAB_LOCAL_AGENT: "0" }, shared: false },
  /** Without a local agent: the only agent is the file's own, whose sandbox self-test fails. */
  stuck: { env: { AGENTLAB_LOCAL_AGENT: "0" }, shared: false },
} satisfies Record<string, { env: Record<string, string>; shared: boolean }>;

export type ProductName = keyof typeof PRODUCTS;

export const isProductName = (name: string): name is ProductName => Object.hasOwn(PRODUCTS, name);

/** The product names a test file asks for (`useProduct("NAME")`), in the order it names them. */
export function productsNamedIn(file: string): ProductName[] {
  const source = readFileSync(file, "utf8");
  return [...source.matchAll(/useProduct\("([a-z-]+)"\)/g)].map((m) => m[1] ?? "").filter(isProductName);
}

const PRESTART_AT_ONCE = 1;

/** Starts products on request (and ahead, for `prestart`), each at most once; stops them all at the end. */
export function productService(template: string) {
  const started = new Map<ProductName, Promise<ProductProcess>>();
  const handedOut = new Set<ProductName>();
  const waiting: ProductName[] = [];
  let running = 0;

  const start = (name: ProductName): Promise<ProductProcess> => {
    let p = started.get(name);
    if (!p) {
      p = startProductProcess(name, PRODUCTS[name].env, template);
      // A failed start is reported to the file that asks; it must not end the run here.
      p.catch(() => {});
      started.set(name, p);
    }
    return p;
  };
  const pump = () => {
    while (running < PRESTART_AT_ONCE && waiting.length) {
      const name = waiting.shift();
      if (!name || started.has(name)) continue;
      running++;
      void start(name)
        .catch(() => {})
        .finally(() => {
          running--;
          pump();
        });
    }
  };

  return {
    /** Queues `names` to start ahead of their files. */
    prestart(names: ProductName[]) {
      waiting.push(...names);
      pump();
    },
    /** The running product `name` (started now if it was not); a file's own product only once. */
    async acquire(name: ProductName): Promise<ProductInfo> {
      if (!PRODUCTS[name].shared && handedOut.has(name))
        throw new Error(`product "${name}" belongs to one file; another file asked for it`);
      handedOut.add(name);
      try {
        return (await start(name)).info;
      } catch {
        // Started ahead, it can time out on a loaded box while other files run: once more, now.
        started.delete(name);
        return (await start(name)).info;
      }
    },
    /** A file is done with `name`: a file's own product stops, a shared one runs on. */
    async release(name: ProductName) {
      if (PRODUCTS[name].shared) return;
      const p = started.get(name);
      started.delete(name);
      if (p) await (await p.catch(() => null))?.stop();
    },
    async stopAll() {
      waiting.length = 0;
      const all = [...started.values()];
      started.clear();
      await Promise.all(all.map(async (p) => (await p.catch(() => null))?.stop()));
    },
  };
}

type ProductService = ReturnType<typeof productService>;

/** POST /acquire/NAME → ProductInfo (JSON), POST /release/NAME → 204; an error → 500 with its text. */
export function serveProducts(service: ProductService): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const [, action, name = ""] = (req.url ?? "").split("/");
    const reply = (status: number, body: string) => {
      res.writeHead(status, { "content-type": status === 200 ? "application/json" : "text/plain" });
      res.end(body);
    };
    if (req.method !== "POST" || !isProductName(name) || (action !== "acquire" && action !== "release")) {
      reply(404, `no such product request: ${req.method ?? ""} ${req.url ?? ""}`);
      return;
    }
    const work =
      action === "acquire"
        ? service.acquire(name).then((info) => reply(200, JSON.stringify(info)))
        : service.release(name).then(() => reply(204, ""));
    work.catch((err: unknown) => reply(500, err instanceof Error ? (err.stack ?? err.message) : String(err)));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const addr = server.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}

/**
 * The files of this run (the CLI's file filters, when vitest exposes them; otherwise none, and
 * the products start when their files ask).
 */
export async function filesOfThisRun(project: TestProject): Promise<string[]> {
  const vitest: unknown = project.vitest;
  const filters =
    typeof vitest === "object" && vitest !== null && "filenamePattern" in vitest ? vitest.filenamePattern : null;
  if (filters !== undefined && !Array.isArray(filters)) return [];
  const patterns = (filters ?? []).filter((f): f is string => typeof f === "string");
  return (await project.globTestFiles(patterns)).testFiles;
}

export function readProductLog(info: ProductInfo): string {
  try {
    return readFileSync(info.log, "utf8");
  } catch {
    return "";
  }
}
