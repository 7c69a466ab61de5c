import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "@/lib/auth/credentials";
import { RegisterForm } from "./RegisterForm";

export default function RegisterPage() {
  return (
    <div className="card">
      <h1>Create an account</h1>
      <RegisterForm minLength={PASSWORD_MIN_LENGTH} maxLength={PASSWORD_MAX_LENGTH} />
    </div>
  );
}
