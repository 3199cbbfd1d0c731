"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { useTRPC } from "../_lib/trpc";
import { Field } from "../login/AuthCard";
import { SettingsNav } from "./SettingsNav";

export function AccountView() {
  const trpc = useTRPC();
  const me = useQuery(trpc.auth.me.queryOptions());
  const [pw, setPw] = useState({ currentPassword: "", newPassword: "", confirm: "" });
  const change = useMutation(
    trpc.auth.changePassword.mutationOptions({
      onSuccess: () => setPw({ currentPassword: "", newPassword: "", confirm: "" }),
    }),
  );
  const mismatch = pw.confirm.length > 0 && pw.confirm !== pw.newPassword;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!mismatch) change.mutate({ currentPassword: pw.currentPassword, newPassword: pw.newPassword });
  };
  return (
    <div>
      <PageHeader title="Settings" description="Your account, API tokens and, for admins, the team." />
      <SettingsNav />
      <div className="grid gap-5 md:grid-cols-2">
        <Section title="Account">
          {me.error ? <ErrorBox error={me.error} /> : null}
          {me.data ? (
            <dl className="grid grid-cols-[6rem_1fr] gap-y-2 text-sm">
              <dt className="text-zinc-500">Name</dt>
              <dd>{me.data.name}</dd>
              <dt className="text-zinc-500">Email</dt>
              <dd>{me.data.email}</dd>
              <dt className="text-zinc-500">Role</dt>
              <dd>
                <Badge>{me.data.role}</Badge>
              </dd>
            </dl>
          ) : null}
        </Section>
        <Section title="Change password">
          <form onSubmit={submit}>
            <Field
              label="Current password"
              type="password"
              autoComplete="current-password"
              required
              value={pw.currentPassword}
              onChange={(e) => setPw({ ...pw, currentPassword: e.target.value })}
            />
            <Field
              label="New password"
              type="password"
              autoComplete="new-password"
              required
              minLength={10}
              hint="At least 10 characters. Your other sessions will be signed out and your API tokens revoked."
              value={pw.newPassword}
              onChange={(e) => setPw({ ...pw, newPassword: e.target.value })}
            />
            <Field
              label="Repeat new password"
              type="password"
              autoComplete="new-password"
              required
              value={pw.confirm}
              onChange={(e) => setPw({ ...pw, confirm: e.target.value })}
            />
            {mismatch ? <p className="mb-2 text-xs text-red-700">The passwords differ.</p> : null}
            {change.error ? <ErrorBox title="Password not changed" error={change.error} /> : null}
            {change.data ? (
              <p className="mb-2 text-sm text-emerald-700">
                Password changed; {change.data.otherSessionsEnded} other session(s) signed out and{" "}
                {change.data.tokensRevoked} API token(s) revoked (create new ones for the CLI).
              </p>
            ) : null}
            <Button type="submit" variant="primary" disabled={change.isPending || mismatch}>
              Change password
            </Button>
          </form>
        </Section>
      </div>
    </div>
  );
}
