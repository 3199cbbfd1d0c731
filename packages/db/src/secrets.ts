import { randomBytes } from "node:crypto";
import { sha256Hex } from "@agentlab/core";

// Bearer secrets (agent credentials, API tokens, enrollment and share tokens) are 256 random bits,
// so a plain sha256 is a safe at-rest form: only the hash is stored, the value is shown once.
export const newToken = (prefix: string): string => `${prefix}_${randomBytes(32).toString("base64url")}`;
export const hashToken = (token: string): string => sha256Hex(token);
