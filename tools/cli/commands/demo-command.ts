import { ownCliCommandFrom } from '../../claude/own-cli.js';
import type { Argv } from '../command-context.js';
import { formatStep, runDemo, type DemoStep } from '../../walkthrough.js';

export const command = 'demo';
export const describe =
  'Walk through create, pause, resume decision, finalize, list and cleanup in a temporary project';
export const builder = {};

export async function handler(argv: Argv<object>) {
  const { ctx } = argv;
  // --json: the steps are collected into the one JSON document stdout may hold.
  const text = !argv.json;
  const steps: DemoStep[] = [];
  const run = await runDemo(
    (step) => {
      steps.push(step);
      if (text) ctx.out(formatStep(step));
    },
    ({ project, store }) => {
      if (!text) return;
      ctx.out(`Project: ${project}`);
      ctx.out(`Store:   ${store}`);
    },
  );
  if (!text) return ctx.json({ ...run, steps });
  // Run from here, as it runs here (`node <path>` in a clone, `npx --no agent-session` in a project).
  const cli = ownCliCommandFrom(ctx.io.cwd, ctx.io.env);
  ctx.out(
    `Done: the ${steps.length} steps above are all the demo did. The project stays at ${run.project}; ` +
      `look at it with: ${cli} --dir ${run.store} list`,
  );
}
