"use client";

import { useMemo } from "react";
import { highlightToHtml, languageForPath, type CodeLanguage } from "../_lib/highlight";

/**
 * Read-only source with line numbers. Numbers sit in their own column rather than being spliced
 * into the highlighted HTML, because token spans (e.g. docstrings) may cross line breaks.
 */
export function CodeViewer({
  code,
  language,
  path,
  maxHeight = 480,
  lineNumbers = true,
}: {
  code: string;
  language?: CodeLanguage;
  path?: string;
  maxHeight?: number;
  lineNumbers?: boolean;
}) {
  const lang = language ?? (path ? languageForPath(path) : "text");
  const html = useMemo(() => highlightToHtml(code, lang), [code, lang]);
  const lines = useMemo(() => code.split("\n").length - (code.endsWith("\n") ? 1 : 0), [code]);
  return (
    <div className="overflow-hidden rounded-md border border-zinc-200 bg-white">
      {path ? (
        <div className="flex items-center justify-between border-b border-zinc-200 bg-zinc-50 px-3 py-1.5 font-mono text-xs text-zinc-600">
          <span className="truncate">{path}</span>
          <span className="text-zinc-400">{lang}</span>
        </div>
      ) : null}
      <div className="overflow-auto" style={{ maxHeight }}>
        <div className="flex min-w-max font-mono text-[12px] leading-5">
          {lineNumbers ? (
            <pre
              aria-hidden
              className="select-none border-r border-zinc-100 bg-zinc-50/60 px-2 py-2 text-right text-zinc-400"
            >
              {Array.from({ length: Math.max(1, lines) }, (_, i) => i + 1).join("\n")}
            </pre>
          ) : null}
          <pre className="hljs flex-1 px-3 py-2 text-zinc-800">
            <code dangerouslySetInnerHTML={{ __html: html }} />
          </pre>
        </div>
      </div>
    </div>
  );
}
