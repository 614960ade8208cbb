-- One "data landed" event per series and kind of write (added, revised, removed) for a
-- whole transaction, as the README promises. Before, each write statement notified on its
-- own, so an import that wrote a series in several batches (10,000 rows a statement) sent
-- that series one event per batch. Now each statement merges its series' day ranges into
-- the transaction-local setting metrics.series_events, and a deferred trigger on the
-- dataset_version row (which every write statement bumps) sends them once, when the
-- transaction commits. PostgreSQL still delivers them only after the commit.

-- pending merged with one statement's ranges ([{project, from, to}]) of one kind: a series
-- already pending widens its range and keeps its place (n), a new one comes last.
create function merged_series_events(pending jsonb, kind text, ranges jsonb) returns jsonb
language sql immutable as $$
  select pending || coalesce(jsonb_object_agg(r.key, jsonb_build_object(
      'project', r.project,
      'from', least(r."from", pending -> r.key ->> 'from'),
      'to', greatest(r."to", pending -> r.key ->> 'to'),
      'n', coalesce((pending -> r.key ->> 'n')::bigint, (select count(*) from jsonb_object_keys(pending)) + r.ord))), '{}')
  from (select kind || ':' || x.project as key, x.project, x."from", x."to", x.ord
        from rows from (jsonb_to_recordset(ranges) as (project integer, "from" text, "to" text)) with ordinality as x (project, "from", "to", ord)) r
$$;

-- Adds one statement's written rows (project_id, day) to the events its transaction sends.
create function note_series_events(kind text, ranges jsonb) returns void
language sql as $$
  select set_config('metrics.series_events', merged_series_events(
    coalesce(nullif(current_setting('metrics.series_events', true), ''), '{}')::jsonb, kind, coalesce(ranges, '[]')
  )::text, true)
$$;

create function send_series_events() returns trigger
language plpgsql as $$
declare
  pending jsonb := nullif(current_setting('metrics.series_events', true), '')::jsonb;
begin
  if pending is null then return null; end if;
  perform set_config('metrics.series_events', '', true);
  perform pg_notify('series_updated', json_build_object('project', (e.value ->> 'project')::integer, 'from', e.value ->> 'from', 'to', e.value ->> 'to', 'at', write_time())::text)
    from jsonb_each(pending) e order by (e.value ->> 'n')::bigint;
  return null;
end;
$$;

create constraint trigger series_events_sent after update on dataset_version
  deferrable initially deferred for each row execute function send_series_events();

create or replace function after_point_insert() returns trigger
language plpgsql as $$
begin
  if not exists (select 1 from new_points) then return null; end if;
  update dataset_version set version = version + 1;
  update project set updated_at = write_time() where id in (select distinct project_id from new_points);
  if coalesce(current_setting('metrics.change_log', true), 'on') <> 'off' then
    insert into point_change (project_id, day, value, extra)
      select project_id, day, value, extra from new_points order by project_id, day;
  end if;
  perform note_series_events('added', (select jsonb_agg(jsonb_build_object('project', project_id, 'from', min, 'to', max) order by project_id)
    from (select project_id, min(day), max(day) from new_points group by project_id) s));
  return null;
end;
$$;

create or replace function after_point_update() returns trigger
language plpgsql as $$
begin
  if not exists (select 1 from new_points) then return null; end if;
  update dataset_version set version = version + 1;
  update project set updated_at = write_time() where id in (select distinct project_id from new_points);
  -- A value written and replaced in the same transaction was never served: no history.
  insert into point_history (project_id, day, value, extra, valid_from, valid_to)
    select o.project_id, o.day, o.value, o.extra, o.written_at, write_time() from old_points o where o.written_at < write_time();
  insert into point_change (project_id, day, value, extra)
    select project_id, day, value, extra from new_points order by project_id, day;
  perform note_series_events('revised', (select jsonb_agg(jsonb_build_object('project', project_id, 'from', min, 'to', max) order by project_id)
    from (select project_id, min(day), max(day) from new_points group by project_id) s));
  return null;
end;
$$;

create or replace function after_point_delete() returns trigger
language plpgsql as $$
begin
  if not exists (select 1 from old_points) then return null; end if;
  update dataset_version set version = version + 1;
  update project set updated_at = write_time() where id in (select distinct project_id from old_points);
  insert into point_history (project_id, day, value, extra, valid_from, valid_to)
    select o.project_id, o.day, o.value, o.extra, o.written_at, write_time() from old_points o where o.written_at < write_time();
  insert into point_change (project_id, day, value, extra)
    select project_id, day, null, null from old_points order by project_id, day;
  perform note_series_events('removed', (select jsonb_agg(jsonb_build_object('project', project_id, 'from', min, 'to', max) order by project_id)
    from (select project_id, min(day), max(day) from old_points group by project_id) s));
  return null;
end;
$$;
