import { STATUS_KEY } from '../policy/status-line.js';

/**
 * The short note appended to a delegated prompt: the session id and how to report a phase. `command`
 * runs the CLI where the agent works (tools/claude/own-cli.ts finds it for the hooks).
 */
export function buildFooter(sessionId: string, command = 'agent-session'): string {
  return [
    `[agent-session] Your session: ${sessionId}.`,
    `If you stop before the work is done, end your final message with one line \`${STATUS_KEY}: <phase>\`:`,
    '`approval` (waiting for a decision), `investigating` or `planning` (to be continued later), or `failed`.',
    `No such line means done. With a shell you may instead run \`${command} update ${sessionId} --phase <phase>\`.`,
  ].join('\n');
}

export function appendFooter(prompt: string, footer: string): string {
  return `${prompt.trimEnd()}\n\n${footer}`;
}
