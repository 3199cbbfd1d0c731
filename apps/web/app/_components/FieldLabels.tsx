"use client";

import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";

// A form's field labels by schema path, so that an error summary names "Learning rate" instead of
// `training.learningRate`: each labelled field registers its own label (no second list of labels
// to keep in step), and the error box of the same form reads them.

type Labels = { labels: ReadonlyMap<string, string>; register: (path: string, label: string) => void };
const Ctx = createContext<Labels | null>(null);

export function FieldLabels({ children }: { children: ReactNode }) {
  const [labels, setLabels] = useState<ReadonlyMap<string, string>>(new Map());
  const register = useCallback(
    (path: string, label: string) => setLabels((m) => (m.get(path) === label ? m : new Map(m).set(path, label))),
    [],
  );
  return <Ctx.Provider value={{ labels, register }}>{children}</Ctx.Provider>;
}

export function useRegisterFieldLabel(path: string | undefined, label: string): void {
  const register = useContext(Ctx)?.register;
  useEffect(() => {
    if (register && path) register(path, label);
  }, [register, path, label]);
}

/** The label of `path` or of its nearest labelled parent (`training.lora.r` → "LoRA r"), else null. */
export function useFieldLabel(): (path: string) => string | null {
  const labels = useContext(Ctx)?.labels;
  return (path) => {
    if (!labels) return null;
    for (let p = path; p; p = p.includes(".") ? p.slice(0, p.lastIndexOf(".")) : "") {
      const l = labels.get(p);
      if (l) return p === path ? l : `${l} (${path.slice(p.length + 1)})`;
    }
    return null;
  };
}

/** Scrolls to and focuses the first field the server refused, each time a new error arrives. */
export function useScrollToFirstFieldError(error: unknown): void {
  useEffect(() => {
    if (!error) return;
    const first = document.querySelector("[data-field-error]");
    const input = first?.closest("label")?.querySelector("input, select, textarea");
    first?.scrollIntoView({ block: "center", behavior: "smooth" });
    if (input instanceof HTMLElement) input.focus({ preventScroll: true });
  }, [error]);
}
