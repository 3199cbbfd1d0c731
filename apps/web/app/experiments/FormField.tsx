"use client";

import type { ReactNode } from "react";
import { FieldError } from "../_components/ErrorBox";
import { useRegisterFieldLabel } from "../_components/FieldLabels";
import type { ExperimentForm } from "./form";

// The experiment form's labelled field: the server's schema is the judge, and its refusal for
// `path` appears under the input that holds that field.

export const inputClass = "h-8 w-full rounded-md border border-zinc-300 px-2 text-sm";

export function Field({
  label,
  hint,
  path,
  error,
  children,
}: {
  label: string;
  hint?: string;
  path?: string;
  error?: unknown;
  children: ReactNode;
}) {
  useRegisterFieldLabel(path, label);
  return (
    <label className="block text-sm">
      <span className="mb-1 block text-xs font-medium text-zinc-600">{label}</span>
      {children}
      {hint ? <span className="mt-0.5 block text-xs text-zinc-400">{hint}</span> : null}
      {path ? <FieldError error={error} path={path} /> : null}
    </label>
  );
}

/** The form's state and its setter, as each part of the form receives them. */
export type FormPart = { f: ExperimentForm; setF: (f: ExperimentForm) => void; error: unknown };

/** An onChange handler writing one form key. */
export const setter =
  ({ f, setF }: Pick<FormPart, "f" | "setF">) =>
  <K extends keyof ExperimentForm>(k: K) =>
  (e: { target: { value: string } }) =>
    setF({ ...f, [k]: e.target.value as ExperimentForm[K] });

type TextKey = { [K in keyof ExperimentForm]: ExperimentForm[K] extends string ? K : never }[keyof ExperimentForm];
export type NumberAttrs = { min?: number; max?: number; hint?: string; placeholder?: string };

/** A number input for one form key (held as text); its bounds are hints, the server's schema judges `path`. */
export function NumberField({
  part: { f, setF, error },
  k,
  path,
  label,
  attrs = {},
}: {
  part: FormPart;
  k: TextKey;
  path: string;
  label: string;
  attrs?: NumberAttrs;
}) {
  return (
    <Field path={path} error={error} label={label} hint={attrs.hint}>
      <input
        className={inputClass}
        name={k}
        type="number"
        step="any"
        min={attrs.min}
        max={attrs.max}
        value={f[k]}
        placeholder={attrs.placeholder}
        onChange={(e) => setF({ ...f, [k]: e.target.value })}
      />
    </Field>
  );
}
