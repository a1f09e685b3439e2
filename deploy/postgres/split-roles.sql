-- PostgreSQL roles and schemas for a split deployment (awaken control + awaken coordinator).
--
-- Run as a superuser (or a role with CREATEROLE that may create schemas) in the database both
-- processes use, with the two login passwords as psql variables:
--
--   psql "postgres://postgres@db.internal:5432/awaken" \
--     -v control_password="$AWAKEN_CONTROL_DB_PASSWORD" \
--     -v coordinator_password="$AWAKEN_COORDINATOR_DB_PASSWORD" \
--     -f deploy/postgres/split-roles.sql
--
-- What it sets up:
--   * login role awaken_control, owner of schema awaken_control;
--   * login role awaken_coordinator, owner of schema awaken_coordinator;
--   * neither role has any privilege on the other's schema (no USAGE, so no table, function or
--     sequence in it can even be named), nor CREATE on schema public;
--   * each role's default search_path is its own schema (the URLs name it too).
--
-- Each process migrates its own schema at start-up as its own role (it owns the schema, so it may
-- create its tables there); the tables it does not use stay empty.
--
-- Re-runnable: roles and schemas are created when missing, the passwords are (re)set, and the
-- privileges are brought back to the state above on every run. Nothing is dropped.
--
-- Lines starting with a backslash are psql meta-commands (the \if blocks only check the variables);
-- everything else is plain SQL.

\set ON_ERROR_STOP on

-- Fail early, with a clear message, when a password variable is missing (psql would otherwise send
-- the literal text :'control_password' and report a syntax error).
\if :{?control_password}
\else
  DO $$ BEGIN RAISE EXCEPTION 'split-roles.sql: set control_password (psql -v control_password=...)'; END $$;
\endif
\if :{?coordinator_password}
\else
  DO $$ BEGIN RAISE EXCEPTION 'split-roles.sql: set coordinator_password (psql -v coordinator_password=...)'; END $$;
\endif

-- The roles: created without a password when missing, then given one below (psql does not
-- substitute variables inside the dollar-quoted body of a DO block).
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'awaken_control') THEN
    CREATE ROLE awaken_control LOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'awaken_coordinator') THEN
    CREATE ROLE awaken_coordinator LOGIN;
  END IF;
END
$$;

ALTER ROLE awaken_control WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
  PASSWORD :'control_password';
ALTER ROLE awaken_coordinator WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
  PASSWORD :'coordinator_password';

-- One schema per role, owned by it. ALTER … OWNER covers a schema that existed already.
CREATE SCHEMA IF NOT EXISTS awaken_control AUTHORIZATION awaken_control;
ALTER SCHEMA awaken_control OWNER TO awaken_control;
CREATE SCHEMA IF NOT EXISTS awaken_coordinator AUTHORIZATION awaken_coordinator;
ALTER SCHEMA awaken_coordinator OWNER TO awaken_coordinator;

-- Nothing across: no privilege for anyone else on either schema. An owner's own privileges are not
-- affected by these (they are re-granted implicitly), so each role keeps USAGE and CREATE on its own.
REVOKE ALL ON SCHEMA awaken_control FROM PUBLIC;
REVOKE ALL ON SCHEMA awaken_control FROM awaken_coordinator;
REVOKE ALL ON SCHEMA awaken_coordinator FROM PUBLIC;
REVOKE ALL ON SCHEMA awaken_coordinator FROM awaken_control;

-- Nobody but its owner creates objects in schema public (PostgreSQL 15 and later already default
-- to this; earlier versions granted CREATE to PUBLIC).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM awaken_control;
REVOKE CREATE ON SCHEMA public FROM awaken_coordinator;

-- Each role finds its own schema first and public not at all, even on a URL that names no
-- search_path. The URLs should still name it: `?options=-c%20search_path%3D<schema>`.
ALTER ROLE awaken_control SET search_path = awaken_control;
ALTER ROLE awaken_coordinator SET search_path = awaken_coordinator;
