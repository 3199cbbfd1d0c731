import type { Metadata } from "next";
import { Suspense } from "react";
import { SetupForm } from "./SetupForm";

export const metadata: Metadata = { title: "Create your account" };

export default function SetupPage() {
  return (
    <Suspense>
      <SetupForm />
    </Suspense>
  );
}
