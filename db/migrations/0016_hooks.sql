-- Webhooks (src/hooks): each hook's rules and position in the change log, and the
-- deliveries it owes, durable so a restart or a crash continues where it was.
--
-- A hook turns the change log (point_change) after `after_seq` into deliveries, one per
-- committing transaction that produced events, and moves `after_seq` in the same
-- transaction. Deliveries go out in `seq` order per hook. An instance works on a hook
-- while it holds its lease (`lease_until`, claimed with FOR UPDATE SKIP LOCKED), so
-- several instances share hooks and each delivery is sent by one of them.
create table hook (
  id text primary key,
  -- The owning API key's stable id (KeyIdentity.id): a key sees only its hooks.
  owner text not null,
  url text not null,
  description text not null default '',
  -- {"metrics": [...], "projects": [...]}; a missing list means all.
  filter jsonb not null default '{}',
  rules jsonb not null,
  -- Standard Webhooks signing secret (whsec_…): needed to sign, so stored as given out.
  secret text not null,
  active boolean not null default true,
  created_at timestamptz not null default now(),
  after_seq bigint not null,
  lease_until timestamptz
);
create index hook_owner on hook (owner, created_at);

create table hook_delivery (
  seq bigint generated always as identity primary key,
  hook_id text not null references hook (id) on delete cascade,
  -- The webhook-id header: the same for every attempt of this delivery.
  id text not null unique,
  -- The changes-feed cursor after this delivery's last change.
  cursor text not null,
  -- The events as JSON text, numbers exactly as stored, sent as they are.
  events text not null,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  last_status integer,
  last_error text,
  created_at timestamptz not null default now(),
  next_attempt_at timestamptz not null default now(),
  finished_at timestamptz
);
create index hook_delivery_queue on hook_delivery (hook_id, seq) where state = 'pending';
create index hook_delivery_by_hook on hook_delivery (hook_id, seq);

-- A "late" rule (its index in the hook's rules) fires once per series and day.
create table hook_late_fired (
  hook_id text not null references hook (id) on delete cascade,
  rule integer not null,
  project_id integer not null references project (id),
  day date not null,
  primary key (hook_id, rule, project_id, day)
);
