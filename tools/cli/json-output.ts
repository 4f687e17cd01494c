/** Output is handed to stdout in pieces of about this size: few writes, and no document-sized string. */
const CHUNK = 64 * 1024;

/**
 * Writes `value` as `JSON.stringify(value, null, 2)` followed by a newline, the same bytes, in pieces:
 * the top-level object and its arrays are written element by element, so a listing of 100,000
 * sessions never becomes one string of tens of MB (nor its copy on the way to stdout).
 */
export function writeJson(value: unknown, write: (text: string) => void): void {
  let pending = '';
  const out = (text: string) => {
    pending += text;
    if (pending.length >= CHUNK) {
      write(pending);
      pending = '';
    }
  };
  emit(value, '', 0, out);
  write(`${pending}\n`);
}

/** Containers down to this depth are written piece by piece; below it, each value in one stringify. */
const STREAM_DEPTH = 2;

function emit(value: unknown, indent: string, depth: number, out: (text: string) => void): void {
  if (depth < STREAM_DEPTH && Array.isArray(value) && value.length > 0) {
    const inner = `${indent}  `;
    out('[\n');
    value.forEach((item, i) => {
      out(inner);
      // JSON.stringify writes null for what it cannot represent inside an array (undefined, functions).
      if (stringifies(item)) emit(item, inner, depth + 1, out);
      else out('null');
      out(i < value.length - 1 ? ',\n' : '\n');
    });
    out(`${indent}]`);
    return;
  }
  if (depth < STREAM_DEPTH && isPlainData(value)) {
    const entries = Object.entries(value).filter(([, v]) => stringifies(v));
    if (entries.length > 0) {
      const inner = `${indent}  `;
      out('{\n');
      entries.forEach(([key, v], i) => {
        out(`${inner}${JSON.stringify(key)}: `);
        emit(v, inner, depth + 1, out);
        out(i < entries.length - 1 ? ',\n' : '\n');
      });
      out(`${indent}}`);
      return;
    }
  }
  // String(): JSON.stringify(undefined) is undefined, which the whole-document version printed as such.
  const text = String(JSON.stringify(value, null, 2));
  out(indent === '' ? text : text.replaceAll('\n', `\n${indent}`));
}

/** Whether JSON.stringify writes the value (it leaves out undefined, functions and symbols). */
function stringifies(value: unknown): boolean {
  const type = typeof value;
  if (type === 'undefined' || type === 'function' || type === 'symbol') return false;
  // Rare: a toJSON may itself answer undefined; only then is the value stringified twice.
  return typeof (value as { toJSON?: unknown } | null)?.toJSON !== 'function' || JSON.stringify(value) !== undefined;
}

/** An object JSON.stringify writes key by key: no toJSON of its own, not an array. */
function isPlainData(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
}
