import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./globals.css";
import { Nav } from "./_components/Nav";
import { AppProviders } from "./_lib/trpc";

export const metadata: Metadata = {
  title: { default: "agentlab", template: "%s · agentlab" },
  description: "Post-training lab for code-repair models",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen">
        <AppProviders>
          <Nav />
          <main className="mx-auto max-w-[1400px] px-5 py-6">{children}</main>
        </AppProviders>
      </body>
    </html>
  );
}
