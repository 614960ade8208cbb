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
