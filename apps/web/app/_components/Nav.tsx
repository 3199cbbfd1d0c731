"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { UserMenu } from "./UserMenu";

const items = [
  { href: "/", label: "Overview" },
  { href: "/agents", label: "Agents" },
  { href: "/jobs", label: "Jobs" },
  { href: "/pools", label: "Pools" },
  { href: "/splits", label: "Splits" },
  { href: "/providers", label: "Providers" },
  { href: "/collections", label: "Collections" },
  { href: "/datasets", label: "Datasets" },
  { href: "/experiments", label: "Experiments" },
  { href: "/studies", label: "Studies" },
  { href: "/episodes", label: "Episodes" },
  { href: "/settings", label: "Settings" },
];

export const isActive = (pathname: string, href: string): boolean =>
  href === "/" ? pathname === "/" : pathname === href || pathname.startsWith(`${href}/`);

export function Nav() {
  const pathname = usePathname() ?? "/";
  // A share link's reader is outside the workspace: none of these links would open for them.
  if (pathname.startsWith("/share/")) return null;
  return (
    <header className="sticky top-0 z-20 border-b border-zinc-200 bg-white/90 backdrop-blur">
      <div className="mx-auto flex h-12 max-w-[1400px] items-center gap-6 px-5">
        <Link href="/" className="flex items-center gap-2 text-sm font-semibold tracking-tight text-zinc-900">
          <span className="grid size-5 place-items-center rounded bg-zinc-900 font-mono text-[10px] text-white">
            al
          </span>
          agentlab
        </Link>
        <nav className="flex min-w-0 flex-1 items-center gap-0.5 overflow-x-auto" aria-label="Main">
          {items.map((it) => {
            const active = isActive(pathname, it.href);
            return (
              <Link
                key={it.href}
                href={it.href}
                aria-current={active ? "page" : undefined}
                className={`whitespace-nowrap rounded-md px-2.5 py-1 text-[13px] font-medium transition-colors ${active ? "bg-zinc-100 text-zinc-900" : "text-zinc-500 hover:bg-zinc-50 hover:text-zinc-800"}`}
              >
                {it.label}
              </Link>
            );
          })}
        </nav>
        <UserMenu />
      </div>
    </header>
  );
}
