import { ImportResponse } from "@agentlab/core/tasks/spec";
import { CSRF_HEADER, csrfTokenOf } from "../_lib/cookies";
import { httpStatusMessage } from "../../client/errors";

export type UploadState =
  | { phase: "idle" }
  | { phase: "uploading"; sent: number; total: number }
  | { phase: "importing" }
  | { phase: "done"; result: ImportResponse }
  | { phase: "error"; message: string };

/**
 * Streams a task file to the import endpoint with XHR, the one browser API that reports upload
 * progress. The session cookie authenticates; the CSRF token is echoed from its cookie.
 */
export function uploadTaskFile(file: File, pool: string, onState: (s: UploadState) => void): () => void {
  const xhr = new XMLHttpRequest();
  xhr.open("POST", `/api/tasks/import?pool=${encodeURIComponent(pool)}`);
  const csrf = csrfTokenOf(document.cookie);
  if (csrf) xhr.setRequestHeader(CSRF_HEADER, csrf);
  xhr.setRequestHeader("content-type", "application/octet-stream");
  xhr.upload.onprogress = (e) =>
    onState({ phase: "uploading", sent: e.loaded, total: e.lengthComputable ? e.total : file.size });
  // The server validates and writes only after the last byte: that wait is the import itself.
  xhr.upload.onload = () => onState({ phase: "importing" });
  xhr.onerror = () =>
    onState({ phase: "error", message: "the upload failed: cannot reach the server (network error)" });
  xhr.onload = () => {
    const body = parseJson(xhr.responseText);
    const parsed = ImportResponse.safeParse(body);
    if (parsed.success) return onState({ phase: "done", result: parsed.data });
    const message = (body as { error?: { message?: string } } | null)?.error?.message ?? httpStatusMessage(xhr.status);
    onState({ phase: "error", message });
  };
  onState({ phase: "uploading", sent: 0, total: file.size });
  xhr.send(file);
  return () => xhr.abort();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
