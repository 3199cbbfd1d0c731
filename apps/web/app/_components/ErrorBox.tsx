"use client";

import { TRPCClientError } from "@trpc/client";

type ZodFlat = { formErrors?: string[]; fieldErrors?: Record<string, string[] | undefined> };

/** The parts of an error worth showing: tRPC's code, its (already masked for 5xx) message, and zod field errors. */
export function describeError(err: unknown): { code: string | null; message: string; details: string[] } {
  if (err instanceof TRPCClientError) {
    const data = (err.data ?? {}) as { code?: string; zodError?: ZodFlat | null };
    const z = data.zodError;
    const details = [
      ...(z?.formErrors ?? []),
      ...Object.entries(z?.fieldErrors ?? {}).flatMap(([field, msgs]) => (msgs ?? []).map((m) => `${field}: ${m}`)),
    ];
    // A failed fetch (server down) surfaces as a TRPCClientError without data.
    return { code: data.code ?? null, message: err.message || "request failed", details };
  }
  if (err instanceof Error) return { code: null, message: err.message, details: [] };
  return { code: null, message: String(err), details: [] };
}

export function ErrorBox({ error, title = "Something went wrong", onRetry }: { error: unknown; title?: string; onRetry?: () => void }) {
  if (!error) return null;
  const { code, message, details } = describeError(error);
  return (
    <div role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2.5 text-sm text-red-800">
      <div className="flex items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="font-medium">
            {title}
            {code ? <span className="ml-2 rounded bg-red-100 px-1 py-0.5 font-mono text-[11px] text-red-700">{code}</span> : null}
          </p>
          <p className="mt-0.5 break-words">{message}</p>
          {details.length ? (
            <ul className="mt-1 list-inside list-disc text-xs">
              {details.map((d) => (
                <li key={d}>{d}</li>
              ))}
            </ul>
          ) : null}
        </div>
        {onRetry ? (
          <button type="button" onClick={onRetry} className="shrink-0 rounded border border-red-300 bg-white px-2 py-0.5 text-xs font-medium hover:bg-red-100">
            Retry
          </button>
        ) : null}
      </div>
    </div>
  );
}
