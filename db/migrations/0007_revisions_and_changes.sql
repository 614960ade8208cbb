-- Revisions, as-of reads, the changes feed and "data landed" events.
--
-- point keeps the value served now and when it was written (written_at, the writing
-- transaction's time). A write that replaces or removes a value moves the value it ends
-- into point_history with the span it was served (valid_from .. valid_to), so a read
-- "as of" an instant finds exactly one value per day, or none, in one of the two tables.
-- Every write is also appended to point_change for the changes feed. Its sequence is
-- taken in the triggers after the dataset_version row is locked, and that lock is held
-- until the writing transaction ends: writers take turns, so sequence order is commit
-- order, and what a reader sees of the log is always a prefix of it (gaps are rollbacks).
alter table point add column written_at timestamptz not null default now();

create table point_history (
  project_id integer not null references project (id),
  day date not null,
  value numeric not null,
  extra jsonb,
  valid_from timestamptz not null,
  valid_to timestamptz not null,
  primary key (project_id, day, valid_from)
);

create table point_change (
  seq bigint generated always as identity primary key,
  project_id integer not null references project (id),
  day date not null,
  -- null: the write removed the point
  value numeric,
  extra jsonb,
  written_at timestamptz not null default now()
);
create index point_change_written_at on point_change (written_at);

drop trigger point_inserts_noted on point;
drop trigger point_updates_noted on point;
drop trigger point_deletes_noted on point;
drop function note_point_writes();

-- What every write statement leaves behind, given the rows it wrote (new values; the
-- value is null where a point was removed): a new dataset version, each series'
-- updated_at, a change per row, and one notification per series, which PostgreSQL
-- delivers when (and only if) the transaction commits. A bulk load of sample data into
-- an empty store sets metrics.change_log to off: nothing was replaced, and the feed
-- starts after it.
create function after_point_insert() returns trigger
language plpgsql as $$
begin
  if not exists (select 1 from new_points) then return null; end if;
  update dataset_version set version = version + 1;
  update project set updated_at = now() where id in (select distinct project_id from new_points);
  if coalesce(current_setting('metrics.change_log', true), 'on') <> 'off' then
    insert into point_change (project_id, day, value, extra)
      select project_id, day, value, extra from new_points order by project_id, day;
  end if;
  perform pg_notify('series_updated', json_build_object('project', project_id, 'from', min(day), 'to', max(day), 'at', now())::text)
    from new_points group by project_id;
  return null;
end;
$$;

create function after_point_update() returns trigger
language plpgsql as $$
begin
  if not exists (select 1 from new_points) then return null; end if;
  update dataset_version set version = version + 1;
  update project set updated_at = now() where id in (select distinct project_id from new_points);
  -- A value written and replaced in the same transaction was never served: no history.
  insert into point_history (project_id, day, value, extra, valid_from, valid_to)
    select o.project_id, o.day, o.value, o.extra, o.written_at, now() from old_points o where o.written_at < now();
  insert into point_change (project_id, day, value, extra)
    select project_id, day, value, extra from new_points order by project_id, day;
  perform pg_notify('series_updated', json_build_object('project', project_id, 'from', min(day), 'to', max(day), 'at', now())::text)
    from new_points group by project_id;
  return null;
end;
$$;

create function after_point_delete() returns trigger
language plpgsql as $$
begin
  if not exists (select 1 from old_points) then return null; end if;
  update dataset_version set version = version + 1;
  update project set updated_at = now() where id in (select distinct project_id from old_points);
  insert into point_history (project_id, day, value, extra, valid_from, valid_to)
    select o.project_id, o.day, o.value, o.extra, o.written_at, now() from old_points o where o.written_at < now();
  insert into point_change (project_id, day, value, extra)
    select project_id, day, null, null from old_points order by project_id, day;
  perform pg_notify('series_updated', json_build_object('project', project_id, 'from', min(day), 'to', max(day), 'at', now())::text)
    from old_points group by project_id;
  return null;
end;
$$;

create trigger point_inserted after insert on point
  referencing new table as new_points for each statement execute function after_point_insert();
create trigger point_updated after update on point
  referencing old table as old_points new table as new_points for each statement execute function after_point_update();
create trigger point_deleted after delete on point
  referencing old table as old_points for each statement execute function after_point_delete();
