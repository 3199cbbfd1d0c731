import { createServer, type Server } from "node:http";

// An OpenAI-compatible chat-completions server that answers with real `tool_calls`: the reply to
// a request is the script of its model at the turn the history has reached (its number of
// assistant messages), then `submit`. Like the real API it refuses (400) a history whose tool
// messages do not answer the assistant's tool call before them, and it names each call with its
// own id, so a client that sent its ids back unmapped would be caught.

export type ScriptedCall = { name: string; args: Record<string, unknown> };
type Message = { role: string; content?: string | null; tool_call_id?: string; tool_calls?: { id: string }[] };
export type SeenRequest = {
  auth: string;
  model: string;
  tools: string[];
  parallel: unknown;
  seed: unknown;
  messages: Message[];
};

export type FakeToolProvider = {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
};

const historyError = (messages: Message[]): string | null => {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role !== "tool") continue;
    const before = messages[i - 1];
    if (before?.role !== "assistant" || before.tool_calls?.[0]?.id !== m.tool_call_id)
      return `messages[${i}]: tool_call_id ${m.tool_call_id ?? "?"} answers no tool call before it`;
  }
  return null;
};

export async function startFakeToolProvider(scripts: Record<string, ScriptedCall[]>): Promise<FakeToolProvider> {
  const seen: SeenRequest[] = [];
  let ids = 0;
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      const send = (status: number, json: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
      const body = JSON.parse(raw) as {
        model: string;
        messages: Message[];
        tools?: { function: { name: string } }[];
        parallel_tool_calls?: unknown;
        seed?: unknown;
      };
      seen.push({
        auth: req.headers.authorization ?? "",
        model: body.model,
        tools: (body.tools ?? []).map((t) => t.function.name),
        parallel: body.parallel_tool_calls,
        seed: body.seed,
        messages: body.messages,
      });
      const bad = historyError(body.messages);
      if (bad) return send(400, { error: { message: bad, type: "invalid_request_error" } });
      const turn = body.messages.filter((m) => m.role === "assistant").length;
      const call = scripts[body.model]?.[turn] ?? { name: "submit", args: {} };
      send(200, {
        id: `chatcmpl-${turn}`,
        object: "chat.completion",
        created: 1,
        model: body.model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: `fake_${ids++}`,
                  type: "function",
                  function: { name: call.name, arguments: JSON.stringify(call.args) },
                },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      });
    });
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      resolve(typeof a === "object" && a ? a.port : 0);
    }),
  );
  return { url: `http://127.0.0.1:${port}/v1`, seen, close: () => new Promise((r) => server.close(() => r())) };
}
