-- API keys are stored as SHA-256 digests of high-entropy random keys; the plain key is shown once.
create table api_key (
  id integer generated always as identity primary key,
  name text not null unique,
  key_hash bytea not null unique,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
