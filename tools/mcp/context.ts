import { Sessions } from '../sessions.js';

/**
 * The store as the MCP server changes it: actor `mcp`, and every audit entry it writes names the
 * Claude Code conversation that called the tool (and, for a forced delete, the reason given).
 * A subclass rather than a wrapper, so that every entry written through `this` (single or batched) gets it.
 */
export class McpSessions extends Sessions {
  readonly conversation: string | null;
  private readonly auditExtra: Record<string, unknown>;

  constructor(base: Sessions, conversation: string | null, auditExtra: Record<string, unknown> = {}) {
    super(base.store, base.settings, () => base.now(), 'mcp');
    this.conversation = conversation;
    this.auditExtra = auditExtra;
  }

  protected override auditDetails(details: Record<string, unknown>): Record<string, unknown> {
    return { ...details, conversation: this.conversation, ...this.auditExtra };
  }

  /** The same store, with more details in every audit entry (one tool call's `reason`). */
  withAudit(extra: Record<string, unknown>): McpSessions {
    return new McpSessions(this, this.conversation, { ...this.auditExtra, ...extra });
  }
}
