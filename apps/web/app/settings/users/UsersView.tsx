"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ROLES_BY_RANK, type Role } from "@agentlab/core/security/roles";
import { Button } from "../../_components/Button";
import { ErrorBox } from "../../_components/ErrorBox";
import { PageHeader, Section } from "../../_components/PageHeader";
import { Table, type Column } from "../../_components/Table";
import { Ago } from "../../_components/Time";
import { useTRPC } from "../../_lib/trpc";
import { useViewer } from "../../_lib/viewer";
import { Field } from "../../login/AuthCard";
import { SettingsNav } from "../SettingsNav";

type UserRow = { id: string; email: string; name: string; role: Role; createdAt: string | Date };
type InviteRow = { id: string; role: Role; email: string | null; expiresAt: string | Date; createdAt: string | Date };

const RoleSelect = ({
  value,
  onChange,
  disabled,
}: {
  value: Role;
  onChange: (r: Role) => void;
  disabled?: boolean;
}) => (
  <select
    className="h-8 rounded-md border border-zinc-300 px-2 text-sm"
    value={value}
    disabled={disabled}
    onChange={(e) => onChange(e.target.value as Role)}
  >
    {ROLES_BY_RANK.map((r) => (
      <option key={r} value={r}>
        {r}
      </option>
    ))}
  </select>
);

export function UsersView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const viewer = useViewer();
  const users = useQuery(trpc.users.list.queryOptions());
  const invites = useQuery(trpc.users.invites.queryOptions());
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.users.pathKey() });
  const setRole = useMutation(trpc.users.setRole.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.users.remove.mutationOptions({ onSettled: refresh }));
  const revokeInvite = useMutation(trpc.users.revokeInvite.mutationOptions({ onSettled: refresh }));
  const [inv, setInv] = useState<{ role: Role; email: string }>({ role: "member", email: "" });
  const [link, setLink] = useState<string | null>(null);
  const invite = useMutation(
    trpc.users.invite.mutationOptions({ onSuccess: (r) => (setLink(`${window.location.origin}${r.path}`), refresh()) }),
  );
  const me = viewer.status === "signed-in" ? viewer.email : null;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    invite.mutate({ role: inv.role, email: inv.email.trim() || undefined });
  };
  const userCols: Column<UserRow>[] = [
    { key: "name", header: "Name", cell: (u) => <span className="font-medium">{u.name}</span> },
    { key: "email", header: "Email", cell: (u) => u.email },
    {
      key: "role",
      header: "Role",
      cell: (u) => (
        <RoleSelect
          value={u.role}
          disabled={setRole.isPending}
          onChange={(role) => setRole.mutate({ id: u.id, role })}
        />
      ),
    },
    { key: "since", header: "Joined", cell: (u) => <Ago at={u.createdAt} /> },
    {
      key: "remove",
      header: "",
      className: "w-px",
      cell: (u) =>
        u.email === me ? null : (
          <Button
            size="sm"
            variant="danger"
            disabled={remove.isPending}
            onClick={() =>
              window.confirm(`Remove ${u.email}? Their sessions and API tokens end at once.`) &&
              remove.mutate({ id: u.id })
            }
          >
            Remove
          </Button>
        ),
    },
  ];
  const inviteCols: Column<InviteRow>[] = [
    { key: "role", header: "Role", cell: (i) => i.role },
    {
      key: "email",
      header: "For",
      cell: (i) => i.email ?? <span className="text-zinc-400">anyone with the link</span>,
    },
    { key: "expires", header: "Expires", cell: (i) => new Date(i.expiresAt).toLocaleString() },
    {
      key: "revoke",
      header: "",
      className: "w-px",
      cell: (i) => (
        <Button size="sm" variant="danger" onClick={() => revokeInvite.mutate({ id: i.id })}>
          Revoke
        </Button>
      ),
    },
  ];
  const error = users.error ?? setRole.error ?? remove.error ?? revokeInvite.error;
  return (
    <div>
      <PageHeader
        title="Users"
        description="One team, one workspace: a role applies to everything in the lab. Admins manage users, agents and secrets; members run experiments; viewers read."
      />
      <SettingsNav />
      <div className="grid gap-5">
        {error ? <ErrorBox error={error} /> : null}
        <Table columns={userCols} rows={(users.data ?? []) as UserRow[]} rowKey={(u) => u.id} />
        <Section title="Invite someone">
          <form onSubmit={submit} className="flex flex-wrap items-end gap-3">
            <div className="w-64">
              <Field
                label="Email (optional)"
                type="email"
                placeholder="binds the link to this address"
                value={inv.email}
                onChange={(e) => setInv({ ...inv, email: e.target.value })}
              />
            </div>
            <label className="mb-3 block text-sm">
              <span className="mb-1 block font-medium text-zinc-700">Role</span>
              <RoleSelect value={inv.role} onChange={(role) => setInv({ ...inv, role })} />
            </label>
            <Button type="submit" variant="primary" className="mb-3" disabled={invite.isPending}>
              Create invitation link
            </Button>
          </form>
          {invite.error ? <ErrorBox title="No invitation created" error={invite.error} /> : null}
          {link ? (
            <div className="mt-2 rounded-md border border-amber-200 bg-amber-50 p-3 text-sm">
              <p className="font-medium text-amber-900">Send this one-time link privately; it is shown only now.</p>
              <code className="mt-1 block break-all rounded bg-white px-2 py-1 font-mono text-xs">{link}</code>
            </div>
          ) : null}
        </Section>
        <Section title="Pending invitations">
          <Table
            bare
            columns={inviteCols}
            rows={(invites.data ?? []) as InviteRow[]}
            rowKey={(i) => i.id}
            empty={<p className="text-sm text-zinc-500">None.</p>}
          />
        </Section>
      </div>
    </div>
  );
}
