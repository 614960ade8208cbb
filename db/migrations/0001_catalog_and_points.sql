-- Metrics and the projects each one allows; rows are synced from the catalog file at start-up.
create table metric (
  id smallint generated always as identity primary key,
  name text not null unique,
  value_kind text not null check (value_kind in ('integer', 'decimal')),
  project_required boolean not null
);

create table project (
  id integer generated always as identity primary key,
  metric_id smallint not null references metric (id),
  slug text not null,
  position smallint not null,
  unique (metric_id, slug)
);

-- One row per metric x project x day: a project row belongs to exactly one metric.
-- The primary key is the read path: "these projects, this date range, by project then day"
-- is one index range scan per project.
create table point (
  project_id integer not null references project (id),
  day date not null,
  value numeric not null,
  extra jsonb,
  primary key (project_id, day)
);
