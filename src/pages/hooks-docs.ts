import type { Config } from '../config.js';
import { MAX_HOOKS_PER_KEY, MAX_REPLAY_CHANGES } from '../hooks/hook-actions.js';
import { MAX_EVENTS_PER_DELIVERY } from '../hooks/group-deliveries.js';

/** The /docs section on webhooks. */
export function hooksDocsSection(config: Pick<Config, 'hooksRetryBaseSeconds' | 'hooksFailAfterHours'>): string {
  return (
    `<h2 id="hooks">Webhooks (extension)</h2>
<p><code>POST /v1/hooks</code> with <code>{"url":"https://…","description":"…",` +
    `"filter":{"metrics":[…],"projects":[…]},"rules":[…]}</code> answers 201 with the hook
(<code>id</code>, <code>secret</code> shown this once, <code>createdAt</code>, <code>cursor</code>); ` +
    `<code>GET /v1/hooks</code>, <code>GET</code>, <code>PATCH</code> (<code>url</code>, ` +
    `<code>description</code>, <code>filter</code>, <code>rules</code>, <code>active</code>) and ` +
    `<code>DELETE /v1/hooks/&lt;id&gt;</code>,
<code>GET /v1/hooks/&lt;id&gt;/deliveries?limit=&amp;cursor=</code> and ` +
    `<code>POST /v1/hooks/&lt;id&gt;/replay</code> with <code>{"since":…}</code> or ` +
    `<code>{"cursor":…}</code> (at most ${MAX_REPLAY_CHANGES.toLocaleString('en')} changes).
A key sees and manages only its own hooks (another's is a 404), at most ${MAX_HOOKS_PER_KEY}. ` +
    `GraphQL: <code>hooks</code>, <code>hook(id)</code>, <code>createHook</code>, ` +
    `<code>updateHook</code>, <code>deleteHook</code>, <code>replayHook</code>.</p>
<p>Rules, any number (each event names the rule that fired by its index, <code>rule</code>, and its ` +
    `<code>type</code>): <code>{"type":"landed"}</code> a day stored where none was;
<code>{"type":"revision","minAbsPercent":1}</code> a stored value changed by at least that ` +
    `percentage of itself (any change of a zero), or removed;
<code>{"type":"threshold","op":"&gt;","value":1000}</code> (<code>&gt; &gt;= &lt; &lt;=</code>) a ` +
    `written value that meets the condition where the value before it did not (the value it ` +
    `replaced, or for a new day the series' preceding day as it was then);
<code>{"type":"late","graceMinutes":60}</code> a series' day that has not landed by its ` +
    `metric's <code>expectedBy</code> (UTC, on the next day) plus the grace, once per series and ` +
    `day, for series that stored a day in the 30 before.</p>
<p>Each delivery is a POST of <code>{"hook","cursor","events":[{"rule","type","metric",` +
    `"project","date","value","previousValue","updatedAt"}]}</code> with the events of one ` +
    `commit (up to ${MAX_EVENTS_PER_DELIVERY}), signed as
<a href="https://www.standardwebhooks.com/">Standard Webhooks</a> specifies ` +
    `(<code>webhook-id</code>, the same for every attempt; <code>webhook-timestamp</code>; ` +
    `<code>webhook-signature</code>, HMAC-SHA256 with the secret): verify it with the reference ` +
    `library. Deliveries go at least once, in order per hook, within seconds of the commit; ` +
    `a non-2xx answer or none within 10 s is retried after ${config.hooksRetryBaseSeconds} s, ` +
    `doubling up to an hour, ±25 %; a delivery still failing ${config.hooksFailAfterHours} h ` +
    `after its commit is <code>failed</code> and the hook goes on.
URLs must be https:// and resolve to public addresses, checked when a hook is made or changed ` +
    `and again at each delivery (the connection goes to the address checked); at most 64 KB of ` +
    `an answer is read.</p>
`
  );
}
