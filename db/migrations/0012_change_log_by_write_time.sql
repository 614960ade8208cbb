-- A changes-feed page finds the first change written at or after its `since` with one
-- index lookup (src/changes/read-changes.ts). Ordered by (written_at, seq), the first entry
-- at an instant is the earliest change, however many one transaction wrote at that time.
create index point_change_written_at_seq on point_change (written_at, seq);
drop index point_change_written_at;
