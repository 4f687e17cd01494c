// The audit trail's SHA-256 is written out in tools/audit/sha256.ts (the hooks avoid loading
// node:crypto); it must agree with node:crypto byte for byte.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DIST } from './helpers/run.mjs';

const { sha256Hex } = await import(pathToFileURL(path.join(DIST, 'tools', 'audit', 'sha256.js')).href);

test('sha256Hex equals node:crypto on block boundaries, multi-byte UTF-8 and random text', () => {
  const samples = [
    '',
    'abc',
    'a'.repeat(55),
    'a'.repeat(56),
    'a'.repeat(63),
    'a'.repeat(64),
    'a'.repeat(65),
    'héllo ✓ 😀',
    '{"hash":""}\n',
  ];
  for (let i = 0; i < 200; i++) {
    samples.push(
      Array.from({ length: Math.floor(Math.random() * 300) }, () =>
        String.fromCodePoint(Math.floor(Math.random() * 0x2fff)),
      ).join(''),
    );
  }
  for (const text of samples)
    assert.equal(sha256Hex(text), createHash('sha256').update(text).digest('hex'), JSON.stringify(text.slice(0, 40)));
});

test('sha256Hex of the FIPS 180-4 example "abc"', () => {
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});
