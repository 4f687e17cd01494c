// Running git in a test's repository, with a fixed author and none of the user's git config.
import { execFileSync } from 'node:child_process';

/** `git <args>` in `cwd`; stdout as text. Throws (with git's stderr) when git fails. */
export function git(cwd, ...args) {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e.x',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e.x',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });
}
