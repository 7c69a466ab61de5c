import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "@/lib/auth/credentials";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { RegisterForm } from "./RegisterForm";

export const dynamic = "force-dynamic";

export default async function RegisterPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { notice } = await searchParams;
  return (
    <div className="card">
      <h1>Create an account</h1>
      <NoScriptNotice posted={notice === "javascript"} action="creating an account" />
      <RegisterForm minLength={PASSWORD_MIN_LENGTH} maxLength={PASSWORD_MAX_LENGTH} />
    </div>
  );
}
