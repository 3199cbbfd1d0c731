"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { canAct, useViewer } from "../_lib/viewer";

export function SettingsNav() {
  const pathname = usePathname() ?? "";
  const viewer = useViewer();
  const items = [
    { href: "/settings", label: "Account" },
    { href: "/settings/tokens", label: "API tokens" },
    ...(canAct(viewer, "admin") ? [{ href: "/settings/users", label: "Users" }] : []),
  ];
  return (
    <nav className="mb-5 flex gap-1 text-sm">
      {items.map((i) => (
        <Link
          key={i.href}
          href={i.href}
          className={`rounded-md px-2.5 py-1 ${pathname === i.href ? "bg-zinc-900 text-white" : "text-zinc-600 hover:bg-zinc-100"}`}
        >
          {i.label}
        </Link>
      ))}
    </nav>
  );
}
