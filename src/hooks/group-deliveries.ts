import { hookCursor } from './hook-queries.js';
import { eventsJson, eventsOfWrite, type FeedWrite, type HookEvent } from './hook-events.js';
import type { HookRule } from './hook-input.js';
import { generateMessageId } from './hook-signing.js';
import type { NewDelivery } from './delivery-queries.js';

/** Events one delivery carries at most: a larger commit is sent in several, in order. */
export const MAX_EVENTS_PER_DELIVERY = 1000;

/**
 * The deliveries a slice of the log makes under `rules`: the events of one committing
 * transaction (its writes share a write time) go together, each delivery carrying the feed
 * cursor after its last write; writes that fire no rule make none.
 */
export function groupDeliveries(rules: readonly HookRule[], writes: readonly FeedWrite[]): NewDelivery[] {
  const deliveries: NewDelivery[] = [];
  let events: HookEvent[] = [];
  let commit: string | undefined;
  let lastSeq = '';
  const flush = () => {
    if (events.length > 0)
      deliveries.push({ id: generateMessageId(), cursor: hookCursor(lastSeq), events: eventsJson(events) });
    events = [];
  };
  for (const write of writes) {
    if (write.writtenAt !== commit || events.length >= MAX_EVENTS_PER_DELIVERY) flush();
    commit = write.writtenAt;
    const fired = eventsOfWrite(rules, write);
    if (fired.length > 0) {
      events.push(...fired);
      lastSeq = write.seq;
    }
  }
  flush();
  return deliveries;
}
