import type { ButtonHTMLAttributes } from "react";

type Variant = "primary" | "secondary" | "danger" | "ghost";

const variants: Record<Variant, string> = {
  primary: "bg-zinc-900 text-white hover:bg-zinc-700 border-zinc-900",
  secondary: "bg-white text-zinc-800 hover:bg-zinc-50 border-zinc-300",
  danger: "bg-white text-red-700 hover:bg-red-50 border-red-300",
  ghost: "bg-transparent text-zinc-600 hover:bg-zinc-100 border-transparent",
};

export function Button({
  variant = "secondary",
  size = "md",
  className = "",
  type = "button",
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; size?: "sm" | "md" }) {
  const sz = size === "sm" ? "h-7 px-2 text-xs" : "h-8 px-3 text-sm";
  return (
    <button
      type={type}
      className={`inline-flex items-center justify-center gap-1.5 rounded-md border font-medium shadow-xs transition-colors disabled:cursor-not-allowed disabled:opacity-50 ${sz} ${variants[variant]} ${className}`}
      {...rest}
    />
  );
}
