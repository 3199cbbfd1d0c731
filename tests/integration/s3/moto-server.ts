import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";

// moto's standalone server (PyPI moto[server]; scripts/setup-s3-test.sh makes its venv): a real
// process speaking the S3 wire protocol on a loopback port, started and stopped by the test.
export const MOTO_BIN = fileURLToPath(new URL("./.venv/bin/moto_server", import.meta.url));
export const motoInstalled = () => existsSync(MOTO_BIN);

export type MotoServer = { endpoint: string; client: S3Client; bucket: string; stop(): Promise<void> };

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });

export const MOTO_CREDENTIALS = { accessKeyId: "agentlab-test", secretAccessKey: "agentlab-test-secret" };

export async function startMoto(bucket = "agentlab-artifacts"): Promise<MotoServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(MOTO_BIN, ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited ${child.exitCode}: ${stderr}`);
    const up = await fetch(`${endpoint}/moto-api/`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`moto_server did not answer on ${endpoint}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const client = new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: MOTO_CREDENTIALS,
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    client,
    bucket,
    async stop() {
      client.destroy();
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
