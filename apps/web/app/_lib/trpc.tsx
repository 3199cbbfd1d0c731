"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
// Type-only: the server's router is never bundled into the browser.
import type { AppRouter } from "../../server/routers";
import { namedFetch } from "../../client/errors";
import { CSRF_HEADER, csrfTokenOf, isPublicPath, loginUrl } from "./cookies";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();
export type { AppRouter };

export function httpStatusOf(err: unknown): number | null {
  if (err instanceof TRPCClientError) {
    const status = (err.data as { httpStatus?: unknown } | undefined)?.httpStatus;
    return typeof status === "number" ? status : null;
  }
  return null;
}

function redirectOn401(err: unknown) {
  if (typeof window === "undefined" || httpStatusOf(err) !== 401) return;
  const { pathname, search } = window.location;
  if (isPublicPath(pathname)) return;
  window.location.assign(loginUrl(pathname, search));
}

function makeQueryClient() {
  return new QueryClient({
    queryCache: new QueryCache({ onError: redirectOn401 }),
    mutationCache: new MutationCache({ onError: redirectOn401 }),
    defaultOptions: {
      queries: {
        staleTime: 2_000,
        // Auth and validation failures do not heal by retrying.
        retry: (count, err) => {
          const status = httpStatusOf(err);
          return (status === null || status >= 500) && count < 2;
        },
      },
    },
  });
}

function makeTrpcClient() {
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: "/api/trpc",
        // Names a failed fetch and non-JSON error answers (a bare 431, a proxy's 502) for ErrorBox.
        fetch: namedFetch,
        // Cookie-authenticated mutations must echo the CSRF token; queries never change state.
        headers({ opList }) {
          if (typeof document === "undefined" || !opList.some((op) => op.type === "mutation")) return {};
          const token = csrfTokenOf(document.cookie);
          return token ? { [CSRF_HEADER]: token } : {};
        },
      }),
    ],
  });
}

/** Wraps the app in React Query and the tRPC context; one client pair per browser tab. */
export function AppProviders({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(makeTrpcClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
