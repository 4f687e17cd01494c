import { Sessions } from '../sessions.js';

/**
 * The store as the dashboard changes it: actor `dashboard` in every audit entry. A subclass rather
 * than a wrapper (as the MCP server's), so that every entry written through it, single or batched, says so.
 */
export class DashboardSessions extends Sessions {
  constructor(base: Sessions) {
    super(base.store, base.settings, () => base.now(), 'dashboard');
  }
}
