export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON Merge Patch (RFC 7386): objects merge, `null` deletes, anything else replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isPlainObject(patch)) return patch;
  const result: JsonObject = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwn(result, key, mergePatch(result[key], value));
  }
  return result;
}

/** Plain assignment of a `__proto__` key would change the prototype instead of storing data. */
function setOwn(target: JsonObject, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
