#!/bin/bash
# Runs once, when the primary's data folder is created: a user the replica copies and
# streams from, allowed from the compose network. (`set -e` only: the image's entrypoint
# sources a script that is not executable, and stricter options would leak into it.)
set -e
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
create role replicator with replication login password 'example-replication-password';
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
