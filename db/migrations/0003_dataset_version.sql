-- A counter bumped by every statement that changes points. Responses derive their ETag from
-- it and the request, so an ETag is known before the body is built and a stream can carry one.
create table dataset_version (
  id boolean primary key default true check (id),
  version bigint not null
);
insert into dataset_version (version) values (1);

create function bump_dataset_version() returns trigger
language plpgsql as $$
begin
  update dataset_version set version = version + 1;
  return null;
end;
$$;

create trigger point_changes_bump_version
  after insert or update or delete or truncate on point
  for each statement execute function bump_dataset_version();
