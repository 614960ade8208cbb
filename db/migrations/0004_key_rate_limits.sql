-- A key's own rate limit; null falls back to RATE_LIMIT_PER_MINUTE / RATE_LIMIT_BURST.
-- rate_per_minute 0 means the key is not limited.
alter table api_key
  add column rate_per_minute integer check (rate_per_minute >= 0),
  add column rate_burst integer check (rate_burst >= 1);
