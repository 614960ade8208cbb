import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret as Standard Webhooks writes it: `whsec_` and 24 random bytes in base64. */
export function generateHookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** A new hook id. */
export function generateHookId(): string {
  return `hk_${randomBytes(12).toString('base64url')}`;
}

/** A new delivery's `webhook-id`: the same for every attempt of it, so a receiver can drop repeats. */
export function generateMessageId(): string {
  return `msg_${randomBytes(12).toString('base64url')}`;
}

/**
 * The Standard Webhooks headers of one attempt: its id, the time of this attempt and the
 * HMAC-SHA256 signature of `id.timestamp.body` with the hook's secret, made by the
 * specification's reference library so receivers verify it with theirs.
 */
export function signedHeaders(secret: string, messageId: string, body: string, at: Date): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  };
}
