import { EmailLinkPage, emailLinkMetadata } from "../components/EmailLinkPage";

export const dynamic = "force-dynamic";

export const generateMetadata = () => emailLinkMetadata("changeEmail");

/** Opened from an emailed link: nothing happens until the button is pressed. */
export default function ConfirmEmailChangePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  return <EmailLinkPage purpose="changeEmail" searchParams={searchParams} />;
}
