#!/bin/sh
# Run once by the postgres image on an empty data directory (docker-entrypoint-initdb.d): creates
# the control and coordinator roles and schemas in $POSTGRES_DB.
set -eu
psql --no-psqlrc --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v control_password="$AWAKEN_CONTROL_DB_PASSWORD" \
  -v coordinator_password="$AWAKEN_COORDINATOR_DB_PASSWORD" \
  -f /awaken/split-roles.sql
