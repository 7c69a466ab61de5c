import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { currentSession } from "@/lib/auth/browser-session";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { RegisterForm } from "./RegisterForm";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("register"))("title") };
}

export default async function RegisterPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  // Someone already signed in has an account: the form would only confuse.
  if (await currentSession()) redirect("/account");
  const { notice } = await searchParams;
  return (
    <PageMessages namespaces={["register"]}>
      <div className="card">
        {/* The heading is the form's: after sending it says "Check your email" instead. */}
        <RegisterForm notice={<NoScriptNotice posted={notice === "javascript"} action="register" />} />
      </div>
    </PageMessages>
  );
}
