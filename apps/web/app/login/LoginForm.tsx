"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { useState, type FormEvent } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useTRPC } from "../_lib/trpc";
import { AuthCard, Field } from "./AuthCard";
import { safeNext } from "./safe-next";

export function LoginForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const next = safeNext(useSearchParams()?.get("next"));
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const login = useMutation(
    trpc.auth.login.mutationOptions({
      onSuccess: () => {
        queryClient.clear();
        // A full navigation so every cached query reloads as the signed-in user.
        window.location.assign(next);
      },
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    login.mutate({ email, password });
  };
  return (
    <AuthCard title="Sign in to agentlab">
      <form onSubmit={submit}>
        <Field
          label="Email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {login.error ? <ErrorBox title="Could not sign in" error={login.error} /> : null}
        <Button type="submit" variant="primary" className="mt-2 w-full" disabled={login.isPending}>
          {login.isPending ? "Signing in…" : "Sign in"}
        </Button>
      </form>
      <p className="mt-4 text-xs text-zinc-500">No account? Ask an admin of your lab for an invitation link.</p>
    </AuthCard>
  );
}
