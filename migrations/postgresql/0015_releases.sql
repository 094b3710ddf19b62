-- 0015 (PostgreSQL): the release of each schema version, as ../0015_releases.sql, and
-- schema_migrations the owner's alone.
--
-- The documented default privileges (docs/scaling.md, Roles) gave writers INSERT, UPDATE and
-- DELETE on every table the owner creates, schema_migrations included: a writer's stray
-- DELETE made every login see a pending migration and locked the team out until the owner
-- repaired it. Every privilege but SELECT on schema_migrations is taken from every role but
-- its owner, and from PUBLIC, whatever granted it; readers and writers still read it (each
-- opening checks the version). A later `GRANT ... ON ALL TABLES` gives them back: grant with
-- the default privileges instead.
--
-- The DO block's statements end within its lines, not at their ends (where migrations split).

ALTER TABLE schema_migrations ADD COLUMN release TEXT;

DO $$ DECLARE granted RECORD; BEGIN
    FOR granted IN
        SELECT a.privilege_type,
               CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END AS role
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
        WHERE c.oid = 'schema_migrations'::regclass AND a.grantee <> c.relowner
          AND a.privilege_type <> 'SELECT'
    LOOP
        EXECUTE 'REVOKE ' || granted.privilege_type || ' ON schema_migrations FROM ' || granted.role
    ; END LOOP; END $$;
