// The `statusLine` command Claude Code runs (dist/hooks/statusline.js, what `install --statusline`
// writes): the conversation's JSON on stdin, one line or nothing on stdout, exit 0 whatever happens.
// A bundle of its own started by the hooks' launcher (V8's code cache, fail-open), without the CLI:
// Claude Code runs it as often as its screen changes.
import { readStdin, writeAllSync } from '../stdio.js';
import { statusLineText } from './statusline.js';

async function main(): Promise<void> {
  const stdin = await readStdin();
  const line = stdin.ok ? await statusLineText(stdin.text, { env: process.env, cwd: process.cwd() }) : '';
  if (line !== '') writeAllSync(1, `${line}\n`);
}

// Nothing but the line: no stack trace may reach Claude Code's screen.
main().catch(() => undefined);
