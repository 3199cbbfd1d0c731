"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { useState, type FormEvent } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useTRPC } from "../_lib/trpc";
import { AuthCard, Field } from "../login/AuthCard";

// One page for both one-time links: the first admin's setup link and invitations.
export function SetupForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const token = useSearchParams()?.get("token") ?? "";
  const info = useQuery(trpc.auth.linkInfo.queryOptions({ token }, { enabled: token.length > 0, retry: false }));
  const [form, setForm] = useState({ email: "", name: "", password: "", confirm: "" });
  // A full page load on purpose: the new session cookie is picked up by every provider from scratch.
  // eslint-disable-next-line @next/next/no-location-assign-relative-destination
  const done = { onSuccess: () => (queryClient.clear(), window.location.assign("/")) };
  const setup = useMutation(trpc.auth.setupFirstAdmin.mutationOptions(done));
  const accept = useMutation(trpc.auth.acceptInvite.mutationOptions(done));
  const active = info.data?.kind === "setup" ? setup : accept;

  if (!token)
    return <AuthCard title="Missing link">Open the full link you were given; it carries a one-time token.</AuthCard>;
  if (info.isLoading) return <AuthCard title="Checking your link…">One moment.</AuthCard>;
  if (info.error || !info.data)
    return (
      <AuthCard title="This link does not work">
        It is invalid, expired or already used. Ask an admin for a new one.
      </AuthCard>
    );

  const mismatch = form.confirm.length > 0 && form.confirm !== form.password;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (mismatch) return;
    active.mutate({ token, email: info.data?.email ?? form.email, name: form.name, password: form.password });
  };
  const title = info.data.kind === "setup" ? "Create the first admin" : `Join as ${info.data.role}`;
  return (
    <AuthCard
      title={title}
      description={
        info.data.kind === "setup"
          ? "This link works once. The account you create here administers the lab."
          : "Choose your name and password."
      }
    >
      <form onSubmit={submit}>
        {info.data.email ? (
          <Field label="Email" type="email" value={info.data.email} readOnly />
        ) : (
          <Field
            label="Email"
            type="email"
            autoComplete="username"
            required
            value={form.email}
            onChange={(e) => setForm({ ...form, email: e.target.value })}
          />
        )}
        <Field
          label="Name"
          required
          maxLength={100}
          value={form.name}
          onChange={(e) => setForm({ ...form, name: e.target.value })}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          hint="At least 10 characters."
          value={form.password}
          onChange={(e) => setForm({ ...form, password: e.target.value })}
        />
        <Field
          label="Repeat password"
          type="password"
          autoComplete="new-password"
          required
          value={form.confirm}
          onChange={(e) => setForm({ ...form, confirm: e.target.value })}
        />
        {mismatch ? <p className="mb-2 text-xs text-red-700">The passwords differ.</p> : null}
        {active.error ? <ErrorBox title="Could not create the account" error={active.error} /> : null}
        <Button type="submit" variant="primary" className="mt-2 w-full" disabled={active.isPending || mismatch}>
          {active.isPending ? "Creating…" : "Create account"}
        </Button>
      </form>
    </AuthCard>
  );
}
