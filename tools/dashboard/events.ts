import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long a browser waits before it reconnects a dropped stream (the SSE `retry:` field). */
const RETRY_MS = 1000;
/** When the sessions a restore names are read again: it records itself before they are back. */
const LATE_READS_MS = [250, 1000, 5000, 30_000];

export interface ChangeEvent {
  action: string;
  ids: string[];
  trash: boolean;
}

/**
 * The pages' server-sent event streams: each change is one numbered `change` event naming the
 * sessions whose rows changed. Work triggered by audit entries runs one at a time, in order.
 */
export class EventHub {
  private readonly clients = new Set<ServerResponse>();
  private next = 1;
  private chain: Promise<void> = Promise.resolve();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  add(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      Connection: 'keep-alive',
    });
    res.write(`retry: ${RETRY_MS}\n\n`);
    this.clients.add(res);
    req.on('close', () => this.clients.delete(res));
  }

  queue(work: () => Promise<void>): void {
    this.chain = this.chain.then(work).catch(() => undefined);
  }

  send(event: ChangeEvent): void {
    if (event.ids.length === 0 && !event.trash) return;
    const text = `id: ${this.next++}\nevent: change\ndata: ${JSON.stringify(event)}\n\n`;
    for (const res of this.clients) res.write(text);
  }

  /** Reads `ids` again a few times over the next seconds, telling the pages each time something changed. */
  later(ids: string[], refresh: (ids: string[]) => Promise<string[]>): void {
    for (const delay of LATE_READS_MS) {
      if (this.closed) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.queue(async () => this.send({ action: 'refresh', ids: await refresh(ids), trash: true }));
      }, delay);
      this.timers.add(timer);
    }
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const res of this.clients) res.end();
    this.clients.clear();
  }
}
