import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';

/**
 * A session still running long after its last change lost its agent: a killed background agent
 * never sends SubagentStop. Only sessions the hooks created (with a `claude` object) are judged.
 */
export function isAbandoned(record: SessionRecord, now: number, staleMs: number): boolean {
  if (staleMs <= 0 || !record.claude) return false;
  if (record.phase !== 'executing' && record.phase !== 'initializing') return false;
  const at = parseTimestamp(record.last_updated);
  return at !== undefined && now - at > staleMs;
}
