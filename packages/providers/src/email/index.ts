import type { ProviderFactory } from "../registry.js";
import { brevo, sendinblue } from "./brevo.js";
import { mailgun } from "./mailgun.js";
import { mailjet } from "./mailjet.js";
import { nodemailer } from "./nodemailer.js";
import { postmark } from "./postmark.js";
import { resend } from "./resend.js";
import { sendgrid } from "./sendgrid.js";
import { ses } from "./ses.js";

/** The email providers, one module each. */
export const emailProviders: ProviderFactory[] = [nodemailer, sendgrid, mailgun, postmark, resend, ses, brevo, sendinblue, mailjet];
