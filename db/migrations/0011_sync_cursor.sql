-- Where `npm run sync` stands in each upstream's changes feed (GET /v1/changes): the cursor
-- after the last entry it applied, per upstream and scope (--metric/--project), saved in the
-- transaction that applied the entries, so a run stopped part-way resumes exactly there.
create table sync_cursor (
  upstream text primary key,
  cursor text not null,
  saved_at timestamptz not null default now()
);
