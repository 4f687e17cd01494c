/**
 * Hex digits for unique names (temp files, generated ids). They need uniqueness, not secrecy, and
 * Math.random spares the hooks loading node:crypto at start-up (several ms of Claude Code's wait).
 */
export function randomHex(digits: number): string {
  let out = '';
  while (out.length < digits)
    out += Math.floor(Math.random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
  return out.slice(0, digits);
}
