/**
 * Where mail goes: SMTP through nodemailer when SMTP_URL is set; otherwise, on a development
 * server, the log and the development mailbox (GET /dev/mailbox), so the portal's sign-in works
 * on a fresh machine. An exposed server without SMTP_URL logs that mail cannot be sent; its
 * messages are kept (and retried) until SMTP is configured — and never shown in the mailbox.
 */
import nodemailer from 'nodemailer';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

export interface MailEnvelope {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailTransport {
  name: 'smtp' | 'dev' | 'none';
  /** The development mailbox shows sent messages, so it keeps their (encrypted) body. */
  keepsBody: boolean;
  send(mail: MailEnvelope): Promise<void>;
}

export function createMailTransport(config: Config, logger: Logger): MailTransport {
  if (config.mail.smtpUrl) {
    const transporter = nodemailer.createTransport(config.mail.smtpUrl);
    return {
      name: 'smtp',
      keepsBody: false,
      async send(mail) {
        await transporter.sendMail(mail);
      },
    };
  }
  if (config.exposedBecause.length > 0) {
    return {
      name: 'none',
      keepsBody: false,
      async send() {
        throw new Error('SMTP_URL is not set: this server cannot send mail (docs/partners.md, "E-mail")');
      },
    };
  }
  return {
    name: 'dev',
    keepsBody: true,
    async send(mail) {
      // The text carries a one-time link: acceptable only on a development server, which this is.
      logger.info({ to: mail.to, subject: mail.subject, text: mail.text }, 'development mail (no SMTP_URL): also in the development mailbox at /dev/mailbox');
    },
  };
}
