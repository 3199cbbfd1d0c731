"use client";

import { describeError, fieldError } from "../../client/errors";
import { useFieldLabel } from "./FieldLabels";

export { describeError };

/** The message for one form field, shown under its input; `path` is the field's dotted path in the input. */
export function FieldError({ error, path }: { error: unknown; path: string }) {
  const msg = fieldError(error, path);
  return msg ? (
    <span role="alert" data-field-error={path} className="mt-0.5 block text-xs text-red-700">
      {msg}
    </span>
  ) : null;
}

export function ErrorBox({
  error,
  title = "Something went wrong",
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  const labelOf = useFieldLabel();
  if (!error) return null;
  const { code, message, fields, form } = describeError(error);
  // Fields by their form label where the form registered one (FieldLabels), never a bare schema path there.
  const details = [
    ...form,
    ...Object.entries(fields).flatMap(([field, msgs]) => msgs.map((m) => `${labelOf(field) ?? field}: ${m}`)),
  ];
  // With field errors, the list says it; the joined summary would repeat it.
  const headline = details.length ? "Check the highlighted fields:" : message;
  return (
    <div role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2.5 text-sm text-red-800">
      <div className="flex items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="font-medium">
            {title}
            {/* A form's refusal is said in its fields' words; the code only where nothing else explains it. */}
            {code && details.length === 0 ? (
              <span className="ml-2 rounded bg-red-100 px-1 py-0.5 font-mono text-[11px] text-red-700">{code}</span>
            ) : null}
          </p>
          <p className="mt-0.5 break-words">{headline}</p>
          {details.length ? (
            <ul className="mt-1 list-inside list-disc text-xs">
              {details.map((d) => (
                <li key={d}>{d}</li>
              ))}
            </ul>
          ) : null}
        </div>
        {onRetry ? (
          <button
            type="button"
            onClick={onRetry}
            className="shrink-0 rounded border border-red-300 bg-white px-2 py-0.5 text-xs font-medium hover:bg-red-100"
          >
            Retry
          </button>
        ) : null}
      </div>
    </div>
  );
}
