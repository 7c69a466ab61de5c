import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { getConfig, isDevServer } from "@/lib/config/env";
import { readOutbox } from "@/lib/mail/outbox";
import { LocalTime } from "../../components/LocalTime";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Outbox (development)", robots: { index: false, follow: false } };

/**
 * The messages Gatehouse wrote to MAIL_OUTBOX_DIR instead of sending them (no SMTP_URL), newest
 * first, with their links. Only the development server (`npm run dev`) shows it: the links are
 * live single-use tokens for other people's accounts, so any other server answers 404, whatever
 * NODE_ENV says.
 */
export default async function OutboxPage() {
  if (!isDevServer()) notFound();
  const config = getConfig();
  const messages = await readOutbox(config.mail.outboxDir, 50);
  return (
    <div className="card outbox">
      <h1>Outbox</h1>
      <p className="hint">
        {config.mail.smtpUrl ? "SMTP_URL is set, so new mail goes to the relay; these are older messages. " : ""}
        Mail written to <code>{config.mail.outboxDir}</code> (each message is also there as an .eml file). Newest first.
      </p>
      {messages.length === 0 ? (
        <p>No messages yet.</p>
      ) : (
        messages.map((message) => (
          <article key={message.id} data-testid="outbox-message">
            <h2>{message.subject}</h2>
            <dl>
              <dt>To</dt>
              <dd data-testid="outbox-to">{message.to}</dd>
              <dt>Sent</dt>
              <dd>
                <LocalTime iso={message.sentAt} />
              </dd>
              <dt>Kind</dt>
              <dd>{message.kind}</dd>
              {message.links.length > 0 ? (
                <>
                  <dt>Links</dt>
                  <dd>
                    <ul>
                      {message.links.map((link, index) => (
                        <li key={index}>
                          <a href={link.url} rel="noreferrer">
                            {link.label}
                          </a>
                        </li>
                      ))}
                    </ul>
                  </dd>
                </>
              ) : null}
            </dl>
            <pre>{message.text}</pre>
          </article>
        ))
      )}
    </div>
  );
}
