import { SessionError } from '../errors.js';
import { parseDecimal } from '../config.js';
import { parseJson } from '../json.js';
import { isPlainObject, type JsonObject } from '../merge-patch.js';

/** `--metadata` must be a JSON object. */
export function parseMetadata(text: string | undefined): JsonObject | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    throw new SessionError('EINVALID', `--metadata is not valid JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(value))
    throw new SessionError('EINVALID', '--metadata must be a JSON object, like {"ticket":"ABC-1"}');
  return value;
}

/**
 * Numbers are read from decimal text, as in the environment: yargs alone reads `0x10` as 16 and an
 * empty value as 0 (a `cleanup --hours ""` would purge everything finished).
 */
function number(text: string | undefined, flag: string, rule: string, ok: (n: number) => boolean): number | undefined {
  if (text === undefined) return undefined;
  const value = parseDecimal(text);
  if (value === undefined || !Number.isFinite(value) || !ok(value))
    throw new SessionError('EINVALID', `${flag} must be ${rule}, not ${JSON.stringify(text)}`);
  return value;
}

/** A `--limit` where 0 means "no limit" (undefined). */
export function checkLimit(text: string | undefined, flag: string): number | undefined {
  const value = number(text, flag, 'a whole number (0 for all)', (n) => Number.isInteger(n) && n >= 0);
  return value === 0 ? undefined : value;
}

export function checkHours(text: string | undefined): number | undefined {
  return number(text, '--hours', 'a number >= 0', (n) => n >= 0);
}

/** A path option given as an empty string would be the working directory itself. */
export function checkPath(text: string | undefined, flag: string): string | undefined {
  if (text === '') throw new SessionError('EINVALID', `${flag} needs a path, not an empty string`);
  return text;
}
