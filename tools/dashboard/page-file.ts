import { readFileSync } from 'node:fs';

/**
 * The dashboard's page (tools/dashboard/page.html, copied to dist/dashboard/page.html by the build).
 * Both the transpiled library (dist/tools/dashboard/) and the CLI bundle (dist/bin/bundles/) sit two
 * folders below dist/, so one relative path finds it from either.
 */
export function readPage(): string {
  return readFileSync(new URL('../../dashboard/page.html', import.meta.url), 'utf8');
}
