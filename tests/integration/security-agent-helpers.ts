import { io, type Socket } from "socket.io-client";
import { PROTOCOL_VERSION } from "@agentlab/core";
import { testCapabilities } from "./helpers/server";

// A bare socket.io client speaking the agent protocol, for tests that play an agent (or an attacker).
export function connectAgent(url: string, credential: string): Promise<Socket> {
  const socket = io(url, {
    path: "/socket.io",
    auth: { token: credential },
    transports: ["websocket"],
    reconnection: false,
    timeout: 5000,
  });
  return new Promise((resolve, reject) => {
    socket.once("connect", () => resolve(socket));
    socket.once("connect_error", (err) => {
      socket.close();
      reject(err);
    });
  });
}

export type Ack<T = unknown> = { ok: true; data: T } | { ok: false; error: { code: string; message: string } };

export const request = <T = unknown>(
  socket: Socket,
  event: string,
  payload: unknown,
  timeoutMs = 5000,
): Promise<Ack<T>> => socket.timeout(timeoutMs).emitWithAck(event, payload) as Promise<Ack<T>>;

export const hello = (socket: Socket) =>
  request<{ agentId: string }>(socket, "hello", { version: PROTOCOL_VERSION, capabilities: testCapabilities() });

export const waitFor = <T>(socket: Socket, event: string, timeoutMs = 5000): Promise<T> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms`)), timeoutMs);
    socket.once(event, (arg: T) => {
      clearTimeout(timer);
      resolve(arg);
    });
  });
