// SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as lowercase hex. Written out here because the
// audit line is hashed on every change a hook makes, and loading node:crypto would cost the hooks
// several ms of start-up; tests compare it with node:crypto.
import { builtinModule } from '../builtin.js';

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/**
 * A process that hashes more than this many lines reads the audit trail (audit, doctor, export): from
 * then on node:crypto, loaded once, hashes each line in a fraction of the time. A hook never gets here.
 */
const NATIVE_AFTER = 64;
let calls = 0;
let native: ((text: string) => string) | undefined;

interface CryptoModule {
  createHash(name: string): { update(text: string): { digest(encoding: 'hex'): string } };
  /** One call, no Hash object (Node 20.12 and later): a third faster over the lines of a whole trail. */
  hash?: (algorithm: string, text: string) => string;
}

function nativeSha256(text: string): string {
  if (native === undefined) {
    // At run time, not an import: the hooks' bundles must not load node:crypto at start-up.
    const crypto = builtinModule('node:crypto') as unknown as CryptoModule;
    const oneShot = crypto.hash;
    native = oneShot ? (t) => oneShot('sha256', t) : (t) => crypto.createHash('sha256').update(t).digest('hex');
  }
  return native(text);
}

// Written for V8's interpreter, which runs it (a hook hashes once or twice per run, too few for the
// optimizing compilers): rotations inline rather than in a helper function, no destructuring, no
// intermediate arrays. That makes a hash of an audit line a third of what the plain version cost.
export function sha256Hex(text: string): string {
  return ++calls > NATIVE_AFTER ? nativeSha256(text) : sha256Js(text);
}

function sha256Js(text: string): string {
  const data = Buffer.from(text, 'utf8');
  const length = Math.ceil((data.length + 9) / 64) * 64;
  const bytes = new Uint8Array(length);
  bytes.set(data);
  bytes[data.length] = 0x80;
  const view = new DataView(bytes.buffer);
  const bits = data.length * 8;
  view.setUint32(length - 8, Math.floor(bits / 0x1_0000_0000));
  view.setUint32(length - 4, bits >>> 0);
  const h = new Uint32Array(INITIAL);
  const w = new Uint32Array(64);
  for (let offset = 0; offset < length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15] as number;
      const y = w[i - 2] as number;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16] as number) + s0 + (w[i - 7] as number) + s1;
    }
    compress(h, w);
  }
  let hex = '';
  for (let i = 0; i < 8; i++) hex += (h[i] as number).toString(16).padStart(8, '0');
  return hex;
}

/** One block's 64 rounds; `h` is updated in place (Uint32Array stores reduce the sums mod 2^32). */
function compress(h: Uint32Array, w: Uint32Array): void {
  let a = h[0] as number;
  let b = h[1] as number;
  let c = h[2] as number;
  let d = h[3] as number;
  let e = h[4] as number;
  let f = h[5] as number;
  let g = h[6] as number;
  let k = h[7] as number;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (k + S1 + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    k = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = (h[0] as number) + a;
  h[1] = (h[1] as number) + b;
  h[2] = (h[2] as number) + c;
  h[3] = (h[3] as number) + d;
  h[4] = (h[4] as number) + e;
  h[5] = (h[5] as number) + f;
  h[6] = (h[6] as number) + g;
  h[7] = (h[7] as number) + k;
}
