/**
 * Nesting any file or payload we parse may have. JSON.parse itself copes with any depth, but the
 * code that walks the value afterwards (JSON.stringify, merge patches, schema checks) recurses and
 * overflows the stack a few thousand levels down: refused before parsing, it is a clear error.
 */
export const MAX_JSON_DEPTH = 512;

export class JsonTooDeepError extends Error {
  constructor(maxDepth: number) {
    super(`nested deeper than ${maxDepth} levels`);
    this.name = 'JsonTooDeepError';
  }
}

/** JSON.parse for text from files and payloads we did not write: throws JsonTooDeepError past `maxDepth`. */
export function parseJson(text: string, maxDepth: number = MAX_JSON_DEPTH): unknown {
  if (nestedDeeperThan(text, maxDepth)) throw new JsonTooDeepError(maxDepth);
  return JSON.parse(text);
}

/** Whether brackets outside strings nest deeper than `maxDepth` (one pass; the text need not be valid JSON). */
export function nestedDeeperThan(text: string, maxDepth: number): boolean {
  // Text with fewer opening brackets than that cannot nest so deep: most records end here, after
  // a few native indexOf calls rather than a pass over every character in JavaScript.
  if (text.length <= maxDepth || !hasMoreThan(text, maxDepth)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: up to the next quote not escaped by an odd run of backslashes.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

function hasMoreThan(text: string, count: number): boolean {
  let n = 0;
  for (const bracket of ['{', '[']) {
    for (let i = text.indexOf(bracket); i !== -1; i = text.indexOf(bracket, i + 1)) if (++n > count) return true;
  }
  return false;
}
