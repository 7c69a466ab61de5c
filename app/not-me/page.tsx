import { EmailLinkPage, emailLinkMetadata } from "../components/EmailLinkPage";

export const dynamic = "force-dynamic";

export const generateMetadata = () => emailLinkMetadata("notMe");

/** Opened from the new-device mail: nothing happens until the button is pressed, and nothing names the account. */
export default function NotMePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  return <EmailLinkPage purpose="notMe" searchParams={searchParams} />;
}
