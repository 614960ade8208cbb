-- Every write is stamped with its write time: the moment its transaction first held the
-- write turn (the dataset_version row's lock, see src/db/write-points.ts), kept for the
-- rest of the transaction in the setting metrics.write_time. Before, the stamp was now(),
-- when the transaction began: a writer that began before another committed and wrote
-- after it was stamped earlier than the value it replaced, so that value vanished from
-- the history and an as-of read could find two values for one day. Writers hold the turn
-- until they end, so write times follow commit order. A write made without the turn (a
-- bulk load into an empty store, a hand-written statement) still gets now().
create function write_time() returns timestamptz
language sql stable as $$
  select coalesce(nullif(current_setting('metrics.write_time', true), '')::timestamptz, now())
$$;

alter table point alter column written_at set default write_time();
alter table point_change alter column written_at set default write_time();

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
  perform pg_notify('series_updated', json_build_object('project', project_id, 'from', min(day), 'to', max(day), 'at', write_time())::text)
    from new_points group by project_id;
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
  perform pg_notify('series_updated', json_build_object('project', project_id, 'from', min(day), 'to', max(day), 'at', write_time())::text)
    from new_points group by project_id;
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
  perform pg_notify('series_updated', json_build_object('project', project_id, 'from', min(day), 'to', max(day), 'at', write_time())::text)
    from old_points group by project_id;
  return null;
end;
$$;
