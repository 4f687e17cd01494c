import type { Argv } from '../command-context.js';
import { runDemo } from '../../walkthrough.js';

export const command = 'demo';
export const describe =
  'Walk through create, pause, resume decision, finalize, list and cleanup in a temporary project';
export const builder = {};

export async function handler(argv: Argv<object>) {
  const { ctx } = argv;
  // --json: the steps are collected into the one JSON document stdout may hold.
  const steps: string[] = [];
  const project = await runDemo((line) => (argv.json ? steps.push(line) : ctx.out(line)));
  if (argv.json) ctx.json({ project, steps });
}
