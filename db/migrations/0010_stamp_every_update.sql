-- Every update of a point is stamped with its write time, whoever makes it. The import's
-- and sync's upsert sets written_at itself, but an update written by hand (an operator
-- correcting a value in SQL) left it as it was: the history then held the old value from
-- that time on while the point claimed the same start, so an as-of read between the two
-- writes found two values for one day, and removing the point later failed on the
-- history's primary key (the same project, day and valid_from twice). Stamping in a
-- trigger, before the row is written, covers every writer. The upsert's own stamp is the
-- same value (write_time() is fixed for the transaction); the trigger runs only for an
-- update that left written_at as it was, so a large import pays no call per row.
create function stamp_point_update() returns trigger
language plpgsql as $$
begin
  new.written_at := write_time();
  return new;
end;
$$;

create trigger point_update_stamped before update on point
  for each row when (new.written_at = old.written_at) execute function stamp_point_update();

-- Points already updated by hand before this migration: such a point claims the start of
-- the history row its update wrote, which ended when the update was made. That end is the
-- update's write time, so it is the point's. The update triggers stay out of this repair:
-- it changes no value, so it is no write (no revision, no change, no event).
alter table point disable trigger point_updated;
update point p set written_at = h.valid_to
from point_history h
where h.project_id = p.project_id and h.day = p.day and h.valid_from = p.written_at;
alter table point enable trigger point_updated;
