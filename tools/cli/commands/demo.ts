import type { Argv } from '../context.js';
import { runDemo } from '../../demo.js';

export const command = 'demo';
export const describe = 'Walk through create, pause, resume decision, finalize, list and cleanup in a temporary project';
export const builder = {};

export async function handler(argv: Argv<object>) {
  await runDemo((line) => argv.ctx.out(line));
}
