"use client";

// The share pages' answer to a link that opens nothing (the share router's NOT_FOUND messages).

/** One plain page for a revoked, expired or unknown link: what happened and what to do. */
export function DeadLink({ message, opens = "a report" }: { message: string; opens?: string }) {
  const title = message.includes("revoked")
    ? "This link was revoked"
    : message.includes("expired")
      ? "This link has expired"
      : `This link does not open ${opens}`;
  return (
    <div className="mx-auto mt-16 max-w-md text-center" role="alert" aria-label="dead share link">
      <h1 className="mb-2 text-xl font-semibold">{title}</h1>
      <p className="mb-1 text-sm text-zinc-600">{message}.</p>
      <p className="text-sm text-zinc-500">Ask whoever sent it for a new link.</p>
    </div>
  );
}
