import type { ErrorCode } from '../errors.js';

export const EXIT = {
  ok: 0,
  no: 1,
  usage: 2,
  refused: 3,
  store: 4,
  /** 128 + SIGINT, what shells report for Ctrl-C; also used for SIGTERM (one code for "stopped, run it again"). */
  interrupted: 130,
} as const;

/** The one mapping from error codes to exit codes (see SESSION_README.md, "Exit codes"). */
export function exitCodeFor(code: ErrorCode | 'EUSAGE' | undefined): number {
  switch (code) {
    case 'ENOTFOUND':
      return EXIT.no;
    case 'EINVALID':
    case 'EUSAGE':
      return EXIT.usage;
    case 'EFINAL':
    case 'EEXIST':
    case 'EREFUSED':
      return EXIT.refused;
    case 'EINTERRUPTED':
      return EXIT.interrupted;
    case 'ECORRUPT':
    case 'EVERSION':
    case 'ELOCKED':
    case 'EIO':
    case undefined:
      return EXIT.store;
  }
}
