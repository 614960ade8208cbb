-- When each series (project of a metric) was last written: served as Series.updatedAt,
-- in the catalog, and as Last-Modified. Kept by statement triggers over the rows each
-- write statement changed, whatever wrote them (import, seed, sync); now() is the
-- writing transaction's time. A statement that changes nothing (an identical re-import)
-- neither moves it nor bumps the dataset version, so caches stay valid.
alter table project add column updated_at timestamptz;
update project p set updated_at = now() where exists (select 1 from point pt where pt.project_id = p.id);

drop trigger point_changes_bump_version on point;

create function note_point_writes() returns trigger
language plpgsql as $$
begin
  if exists (select 1 from changed_points) then
    update dataset_version set version = version + 1;
    update project set updated_at = now() where id in (select distinct project_id from changed_points);
  end if;
  return null;
end;
$$;

create trigger point_inserts_noted after insert on point
  referencing new table as changed_points for each statement execute function note_point_writes();
create trigger point_updates_noted after update on point
  referencing new table as changed_points for each statement execute function note_point_writes();
create trigger point_deletes_noted after delete on point
  referencing old table as changed_points for each statement execute function note_point_writes();
create trigger point_truncate_bumps_version after truncate on point
  for each statement execute function bump_dataset_version();
