/**
 * How this package is installed, as seen from a project: what decides which command runs its CLI
 * there (the command the prompt footer suggests to a subagent).
 * - `dependency`: the running package is the project's own `node_modules/agent-session`;
 * - `global`: the first `agent-session` on PATH is this package's bin;
 * - `file`: anything else (a clone, a copy, an unpacked package): only its path names it.
 */
export type CliInstall = { kind: 'dependency' } | { kind: 'global' } | { kind: 'file'; bin: string };

/** What the decision needs, each path already resolved through its links (or absent). */
export interface CliFacts {
  /** The running package's CLI, `<package>/dist/bin/agent-session.js`. */
  bin: string;
  /** `<project>/node_modules/agent-session/dist/bin/agent-session.js` when that file exists. */
  projectBin?: string;
  /** What the first `agent-session` on PATH resolves to, when there is one. */
  pathBin?: string;
}

export function decideCliInstall(facts: CliFacts): CliInstall {
  if (facts.projectBin === facts.bin) return { kind: 'dependency' };
  if (facts.pathBin === facts.bin) return { kind: 'global' };
  return { kind: 'file', bin: facts.bin };
}

/**
 * The command that runs the CLI in that install. `npx --no` runs the project's own bin and never
 * fetches a package of that name from the registry (without a terminal, a plain `npx` would).
 */
export function cliCommand(install: CliInstall): string {
  switch (install.kind) {
    case 'dependency':
      return 'npx --no agent-session';
    case 'global':
      return 'agent-session';
    case 'file':
      return `node ${shellWord(install.bin)}`;
  }
}

/** The word quoted for a POSIX shell only when it needs it. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
