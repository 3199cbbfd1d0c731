// The study demo's teacher: a local OpenAI-compatible chat-completions server that answers the
// repair prompt of half of the train tasks with the task's reference fix and the other half with
// the buggy main file unchanged (a lazy teacher: the answer parses, its public test may pass, its
// hidden tests fail). Which half is fixed by a hash of the task id, so every run asks and answers
// the same. A simulation, named as one on every report: no model is asked.
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { formatAnswer, mainPaths, publicContext, renderRepairPrompt, type TaskSpec } from "@agentlab/core";

export const SIM_TEACHER_MODEL = "sim-teacher-half-wrong";

export type SimTeacher = { url: string; wrong: ReadonlySet<string>; close(): Promise<void> };

/** The last message's text of a chat-completions body; null when the body is not JSON. */
function lastUserTurn(body: string): string | null {
  try {
    const parsed: { messages?: { content?: unknown }[] } = JSON.parse(body);
    const last = parsed.messages?.at(-1)?.content;
    return typeof last === "string" ? last : "";
  } catch {
    return null;
  }
}

export async function startSimTeacher(train: readonly TaskSpec[]): Promise<SimTeacher> {
  const rank = (t: TaskSpec) => createHash("sha256").update(`sim-teacher:${t.id}`).digest("hex");
  const ordered = [...train].sort((a, b) => (rank(a) < rank(b) ? -1 : 1));
  const wrong = new Set(ordered.filter((_, i) => i % 2 === 1).map((t) => t.id));
  // The prompt the teacher runner sends for each task (the full public context): its user turn
  // holds the task's files, and the dependency file (limits.py's value) tells tasks of one shape apart.
  const byPrompt = new Map<string, TaskSpec>();
  for (const t of train) byPrompt.set(renderRepairPrompt(publicContext(t))[1]?.content ?? "", t);
  const find = (user: string) =>
    byPrompt.get(user) ??
    train.find((t) => user.includes(t.instruction) && t.files.every((f) => user.includes(f.content)));
  const answerOf = (t: TaskSpec) => {
    const mains = new Set(mainPaths(t));
    const files = wrong.has(t.id)
      ? t.files.filter((f) => mains.has(f.path))
      : t.reference.filter((f) => mains.has(f.path));
    return `Here is the fix.\n\n${formatAnswer(files.map((f) => ({ path: f.path, content: f.content })))}`;
  };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const send = (status: number, json: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
      const user = lastUserTurn(body);
      if (user === null) return send(400, { error: { message: "body is not JSON", type: "invalid_request_error" } });
      const task = find(user);
      if (!task)
        return send(400, { error: { message: "not a train task's repair prompt", type: "invalid_request_error" } });
      send(200, {
        id: `sim-${task.id}`,
        object: "chat.completion",
        created: 0,
        model: SIM_TEACHER_MODEL,
        choices: [{ index: 0, message: { role: "assistant", content: answerOf(task) }, finish_reason: "stop" }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      });
    });
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      resolve(typeof a === "object" && a ? a.port : 0);
    }),
  );
  return { url: `http://127.0.0.1:${port}/v1`, wrong, close: () => new Promise((r) => server.close(() => r())) };
}
