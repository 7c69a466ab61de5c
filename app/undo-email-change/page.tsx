import { EmailLinkPage, emailLinkMetadata } from "../components/EmailLinkPage";

export const dynamic = "force-dynamic";

export const generateMetadata = () => emailLinkMetadata("undoEmailChange");

/** Opened from an emailed link: nothing happens until the button is pressed. */
export default function UndoEmailChangePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  return <EmailLinkPage purpose="undoEmailChange" searchParams={searchParams} />;
}
