-- What each API key spent, per UTC hour: requests and the units they were priced at
-- (GET /v1/usage). Every instance adds its own counts with additive upserts, so the figures
-- of several instances on one database add up. Rows older than the 30 days /v1/usage shows
-- are deleted by the instances as they write.
create table key_usage (
  key_id text not null,
  hour timestamptz not null,
  units bigint not null default 0,
  requests bigint not null default 0,
  primary key (key_id, hour)
);
