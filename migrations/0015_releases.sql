-- 0015: each schema version records the rankhouse release that brought it, and only the owner
-- changes schema_migrations.
--
-- `schema_migrations.release` holds, from this migration on, the release that brought each
-- version (rankhouse.version.RELEASES): a release that meets a warehouse newer than it knows
-- names the release to install. Versions 1 to 14 keep NULL: they came with the releases that
-- all called themselves 0.1.0.
--
-- On a DuckDB file nothing else changes (one file, one owner). On a PostgreSQL server the
-- same migration takes INSERT, UPDATE and DELETE on schema_migrations from writers
-- (../postgresql/0015_releases.sql).

ALTER TABLE schema_migrations ADD COLUMN release VARCHAR;
