import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SessionError } from '../errors.js';

/** How long a preview's token is accepted. */
export const TOKEN_TTL_MS = 10 * 60_000;

/**
 * Confirmation tokens: `<expiry in base 36>.<HMAC>` over the operation, its options and a digest of
 * the state it previewed. The key is made when the server starts, so a token works only with the
 * server that issued it, and nothing is kept between calls: the confirming call computes the preview
 * again and the token matches only if that gives the same digest.
 */
export class Tokens {
  private readonly key = randomBytes(32);
  /** Tokens confirmed (or being confirmed), until they expire: a confirmation is for one act. */
  private readonly spent = new Map<string, number>();

  issue(subject: string, now: number): { token: string; expires_at: string } {
    const expires = now + TOKEN_TTL_MS;
    return {
      token: `${expires.toString(36)}.${this.mac(subject, expires)}`,
      expires_at: new Date(expires).toISOString(),
    };
  }

  /** Throws EINVALID for a token that is not one, EREFUSED (`reason`) for an expired or stale one. */
  check(token: string, subject: string, now: number): void {
    const match = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) throw new SessionError('EINVALID', 'confirm_token is not a token this server issued: preview first');
    const expires = parseInt(match[1]!, 36);
    const expected = Buffer.from(this.mac(subject, expires));
    if (!timingSafeEqual(expected, Buffer.from(match[2]!))) {
      throw new SessionError(
        'EREFUSED',
        'stale confirm_token: what it previewed has changed since (or the options differ); preview again',
        { details: { reason: 'stale_token' } },
      );
    }
    if (now > expires) {
      throw new SessionError('EREFUSED', 'confirm_token expired: preview again', {
        details: { reason: 'expired_token' },
      });
    }
  }

  /**
   * Checks a token and takes it, so that no other call acts on it: a subtree restored after its delete
   * is exactly what was previewed, and a retried call must not delete it again. `release` gives it back
   * when the act failed before changing anything it was for.
   */
  spend(token: string, subject: string, now: number): { release(): void } {
    this.check(token, subject, now);
    for (const [t, expires] of this.spent) if (now > expires) this.spent.delete(t);
    if (this.spent.has(token)) {
      throw new SessionError('EREFUSED', 'confirm_token already used: preview again', {
        details: { reason: 'used_token' },
      });
    }
    this.spent.set(token, parseInt(token.slice(0, token.indexOf('.')), 36));
    return { release: () => void this.spent.delete(token) };
  }

  private mac(subject: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${expires}\n${subject}`).digest('base64url');
  }
}

/** A digest of values (JSON), for a token's subject. */
export function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}
