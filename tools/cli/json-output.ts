/** Output is handed to stdout in pieces of about this size: few writes, and no document-sized string. */
const CHUNK = 64 * 1024;

/** Where output goes: `write` answers false when the reader lags, and then `drain` waits for it. */
export interface Sink {
  write(text: string): boolean | void;
  drain?: () => Promise<void>;
}

/**
 * Writes `value` as `JSON.stringify(value, null, 2)` followed by a newline, the same bytes, in pieces:
 * the top-level object and its arrays are written element by element, so a listing of 100,000
 * sessions never becomes one string of tens of MB, and a slow reader (a pipe) is waited for rather
 * than the whole document queued in memory.
 */
export function writeJson(value: unknown, sink: Sink): Promise<void> {
  return writePieces(document(value), sink);
}

/** An array given as an iterable: written as it is read, a slice at a time, never all in memory. */
export class StreamedArray {
  constructor(readonly items: Iterable<unknown>) {}
}

/**
 * A value made when the writer reaches it: from what the streamed arrays before it went through (the
 * bad lines `audit --json` met while writing the entries). undefined is written as null.
 */
export class LateValue {
  constructor(readonly value: () => unknown) {}
}

/** The pieces, then the newline: a document under CHUNK is written before writeJson returns. */
function* document(value: unknown): Generator<string> {
  yield* pieces(value, '', 0);
  yield '\n';
}

/** Writes the pieces in chunks of about CHUNK characters, waiting whenever the reader lags. */
export async function writePieces(all: Iterable<string>, sink: Sink): Promise<void> {
  let pending = '';
  for (const piece of all) {
    pending += piece;
    if (pending.length < CHUNK) continue;
    const more = sink.write(pending);
    pending = '';
    if (more === false && sink.drain) await sink.drain();
  }
  if (pending !== '') sink.write(pending);
}

/** Containers down to this depth are written piece by piece; below it, each value in one stringify. */
const STREAM_DEPTH = 2;

/** Elements stringified together when each is written whole: one call per slice, not per element. */
const SLICE = 128;

function* pieces(value: unknown, indent: string, depth: number): Generator<string> {
  if (value instanceof LateValue) {
    yield* pieces(value.value() ?? null, indent, depth);
    return;
  }
  if (depth + 1 === STREAM_DEPTH && (value instanceof StreamedArray || (Array.isArray(value) && value.length > 0))) {
    // The elements are written whole, a slice of them per JSON.stringify (null for what it cannot
    // represent, as inside the whole array). At this depth the array is a value of the top-level object
    // or array, indented by two: the slice is stringified inside one more array,
    // "[\n  [\n    <e>,\n    <e>\n  ]\n]", so its elements come out indented by four as they must, and six
    // characters go at each end: the same bytes as element by element, at about half the cost.
    let first = true;
    for (const slice of slicesOf(value instanceof StreamedArray ? value.items : value)) {
      yield first ? '[\n' : ',\n';
      first = false;
      yield JSON.stringify([slice], null, 2).slice(6, -6);
    }
    yield first ? '[]' : `\n${indent}]`;
    return;
  }
  if (value instanceof StreamedArray) value = [...value.items];
  if (depth < STREAM_DEPTH && Array.isArray(value) && value.length > 0) {
    const inner = `${indent}  `;
    yield '[\n';
    for (let i = 0; i < value.length; i++) {
      yield inner;
      const item: unknown = value[i];
      // JSON.stringify writes null for what it cannot represent inside an array (undefined, functions).
      if (stringifies(item)) yield* pieces(item, inner, depth + 1);
      else yield 'null';
      yield i < value.length - 1 ? ',\n' : '\n';
    }
    yield `${indent}]`;
    return;
  }
  if (depth < STREAM_DEPTH && isPlainData(value)) {
    const entries = Object.entries(value).filter(([, v]) => stringifies(v));
    if (entries.length > 0) {
      const inner = `${indent}  `;
      yield '{\n';
      for (let i = 0; i < entries.length; i++) {
        const [key, v] = entries[i]!;
        yield `${inner}${JSON.stringify(key)}: `;
        yield* pieces(v, inner, depth + 1);
        yield i < entries.length - 1 ? ',\n' : '\n';
      }
      yield `${indent}}`;
      return;
    }
  }
  // String(): JSON.stringify(undefined) is undefined, which the whole-document version printed as such.
  const text = String(JSON.stringify(value, null, 2));
  yield indent === '' ? text : text.replaceAll('\n', `\n${indent}`);
}

function* slicesOf(items: Iterable<unknown>): Generator<unknown[]> {
  let slice: unknown[] = [];
  for (const item of items) {
    slice.push(item);
    if (slice.length === SLICE) {
      yield slice;
      slice = [];
    }
  }
  if (slice.length > 0) yield slice;
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
