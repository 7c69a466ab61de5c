import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import Link from "next/link";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("notFound"))("title") };
}

export default async function NotFound() {
  const t = await getTranslations("notFound");
  return (
    <div className="card">
      <h1>{t("heading")}</h1>
      <p>{t("body")}</p>
      <p>
        <Link href="/">{t("home")}</Link>
      </p>
    </div>
  );
}
