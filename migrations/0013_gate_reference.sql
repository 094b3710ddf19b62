-- 0013: the gate's pinned references, its calibration, and honest outcomes.
--
-- gate_references keeps, per system tag and qrels set, every run accepted as the reference
-- the nightly gate weighs a night against (`regress --baseline reference`), with who accepted
-- it, when and why; the newest row of a (system_tag, qrels_id) is the current reference, the
-- older rows are its history (docs/history.md, "A reference that holds").
CREATE SEQUENCE gate_reference_ids START 1;

CREATE TABLE gate_references (
    id           INTEGER PRIMARY KEY DEFAULT nextval('gate_reference_ids'),
    system_tag   VARCHAR NOT NULL,   -- runs.system_tag of the series
    qrels_id     INTEGER NOT NULL,   -- qrels_sets.id the reference holds for
    run_id       INTEGER NOT NULL,   -- runs.id of the reference run
    run_name     VARCHAR NOT NULL,   -- its name when accepted (kept if the run is removed)
    reason       VARCHAR NOT NULL,   -- why: given to `rankhouse gate accept`, or how it was pinned
    accepted_by  VARCHAR,            -- the login that accepted it, when known
    accepted_at  TIMESTAMP NOT NULL  -- UTC
);

-- Per measure of a check: whether it fails the gate (regressed, or not shown non-inferior when
-- the gate fails on that), and what the check's configuration means: where its margin came
-- from ('given', 'calibrated' from the system's nightly history, 'tonight' while calibrating),
-- the night-to-night spread of per-query differences it was calibrated on (the standard
-- deviation, and how many nightly differences it pooled), the expected share of unchanged
-- nights this measure fails, and the drop it catches on the first night with probability 0.8.
ALTER TABLE regress_verdicts ADD COLUMN fails BOOLEAN;

ALTER TABLE regress_verdicts ADD COLUMN margin_source VARCHAR;

ALTER TABLE regress_verdicts ADD COLUMN spread DOUBLE;

ALTER TABLE regress_verdicts ADD COLUMN spread_nights INTEGER;

ALTER TABLE regress_verdicts ADD COLUMN false_alarm DOUBLE;

ALTER TABLE regress_verdicts ADD COLUMN detectable_drop DOUBLE;

-- Before 0013 a measure failed the gate exactly when it was stored as regressed.
UPDATE regress_verdicts SET fails = regressed;

-- Each check's calibration, one row per measure, with the system and the night: what every
-- margin was, where it came from, and what it meant (`rankhouse gate status` shows the newest).
CREATE VIEW gate_calibration AS
SELECT c.id AS check_id, r.system_tag, c.qrels_id, c.run_id, r.name AS run_name, c.created_at,
       c.passed, v.measure, v.status, v.fails, v.margin, v.margin_source, v.spread,
       v.spread_nights, v.false_alarm, v.detectable_drop
FROM regress_checks c
JOIN runs r ON r.id = c.run_id
JOIN regress_verdicts v ON v.check_id = c.id;
