import type { InputHTMLAttributes, ReactNode } from "react";

export function AuthCard({
  title,
  description,
  children,
}: {
  title: string;
  description?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="mx-auto mt-16 max-w-sm rounded-lg border border-zinc-200 bg-white p-6 shadow-xs">
      <h1 className="text-lg font-semibold tracking-tight text-zinc-900">{title}</h1>
      {description ? <p className="mt-1 text-sm text-zinc-500">{description}</p> : null}
      <div className="mt-5">{children}</div>
    </div>
  );
}

export function Field({
  label,
  hint,
  ...input
}: { label: string; hint?: string } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <label className="mb-3 block text-sm">
      <span className="mb-1 block font-medium text-zinc-700">{label}</span>
      <input
        className="h-9 w-full rounded-md border border-zinc-300 px-2.5 text-sm outline-none focus:border-zinc-500 focus:ring-2 focus:ring-zinc-200"
        {...input}
      />
      {hint ? <span className="mt-1 block text-xs text-zinc-500">{hint}</span> : null}
    </label>
  );
}
