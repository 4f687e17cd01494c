// The options objects of the library's public functions, checked for keys the function does not take.
// TypeScript refuses a misspelt key at compile time; a plain-JavaScript caller gets no such help, and
// `cleanup(sessions, { dryrun: true })` would clean for real, `Sessions.open({ dri })` open another store.
import { SessionError } from './errors.js';
import { closest } from './suggest.js';

/** Every key an options type takes, as an object TypeScript checks is complete and exact: `{ dir: true, … }`. */
export type OptionKeys<T> = Record<keyof T, true>;

/** EINVALID for an options value that is not an object or has a key not in `keys`, naming the closest one. */
export function checkOptions<T>(options: T | undefined, keys: OptionKeys<T>, what: string): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SessionError('EINVALID', `the options of ${what} must be an object, not ${JSON.stringify(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(keys, key)) continue;
    const known = Object.keys(keys);
    const suggestion = closest(key, known);
    const hint = suggestion ? `did you mean "${suggestion}"?` : `it takes ${known.join(', ')}`;
    throw new SessionError('EINVALID', `unknown option ${JSON.stringify(key)} of ${what}; ${hint}`, {
      details: { key, ...(suggestion ? { suggestion } : {}) },
    });
  }
}
