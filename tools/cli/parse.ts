import { SessionError } from '../errors.js';
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

export function checkCount(value: number | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new SessionError('EINVALID', `${flag} must be a whole number >= 1`);
  return value;
}

export function checkHours(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value < 0) throw new SessionError('EINVALID', '--hours must be a number >= 0');
  return value;
}
