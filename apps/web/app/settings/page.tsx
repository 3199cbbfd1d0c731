import type { Metadata } from "next";
import { AccountView } from "./AccountView";

export const metadata: Metadata = { title: "Settings" };

export default function SettingsPage() {
  return <AccountView />;
}
