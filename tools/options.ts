// The options objects of the library's public functions, checked for keys the function does not take.
// TypeScript refuses a misspelt key at compile time; a plain-JavaScript caller gets no such help, and
// `cleanup(sessions, { dryrun: true })` would clean for real, `Sessions.open({ dri })` open another store.
import { SessionError } from './errors.js';
import { closest } from './suggest.js';

/** Every key an options type takes, as an object TypeScript checks is complete and exact: `{ dir: true, … }`. */
export type OptionKeys<T> = Record<keyof T, true>;

/** EINVALID for options that are not a plain object or have a key (own or inherited) not in `keys`. */
export function checkOptions<T>(options: T | undefined, keys: OptionKeys<T>, what: string): void {
  if (options === undefined) return;
  const notPlain = () =>
    new SessionError('EINVALID', `the options of ${what} must be a plain object, not ${describe(options)}`);
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw notPlain();
  // Inherited and hidden keys too: `Object.create({ dryrun: true })` reads as a misspelt dryRun all the same.
  const names = new Set(Object.getOwnPropertyNames(options));
  for (const key in options) names.add(key);
  for (const key of names) {
    if (Object.hasOwn(keys, key)) continue;
    const known = Object.keys(keys);
    const suggestion = closest(key, known);
    const hint = suggestion ? `did you mean "${suggestion}"?` : `it takes ${known.join(', ')}`;
    throw new SessionError('EINVALID', `unknown option ${JSON.stringify(key)} of ${what}; ${hint}`, {
      details: { key, ...(suggestion ? { suggestion } : {}) },
    });
  }
  const proto: unknown = Object.getPrototypeOf(options);
  if (proto !== Object.prototype && proto !== null) throw notPlain();
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const name: unknown = typeof value === 'object' ? value.constructor?.name : undefined;
  if (typeof value === 'object')
    return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object with a prototype';
  return typeof value === 'string' ? JSON.stringify(value) : `a ${typeof value}`;
}
