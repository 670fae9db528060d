-- eavpivot dry run: job minesweeper on postgres (golden test, no connection)
-- auto: transforms run in the streaming path
-- attribute -> column:
--   1 -> 1 (MINESWEEPER_VIEW)
--   2 -> 2 (MINESWEEPER_VIEW)
--   3 -> 3 (MINESWEEPER_VIEW)
--   4 -> 4 (MINESWEEPER_VIEW)
--   5 -> 5 (MINESWEEPER_VIEW)
--   6 -> 6 (MINESWEEPER_VIEW)
--   7 -> 7 (MINESWEEPER_VIEW)
--   8 -> 8 (MINESWEEPER_VIEW)
--   9 -> 9 (MINESWEEPER_VIEW)
--   10 -> 10 (MINESWEEPER_VIEW)

-- read-only, ran during the dry run:
SELECT s.v FROM (SELECT y AS e0, x AS a, state AS v
  FROM MINESWEEPER_BOARD) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT (SELECT COUNT(*) FROM pg_collation WHERE NOT collisdeterministic) + (SELECT COUNT(*) FROM pg_type WHERE typname = 'citext');

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(octet_length((s.v)::text)) AS min_bytes, MAX(octet_length((s.v)::text)) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0
FROM (SELECT y AS e0, x AS a, state AS v
  FROM MINESWEEPER_BOARD) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0 FROM (SELECT y AS e0, x AS a, state AS v
  FROM MINESWEEPER_BOARD) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT CASE WHEN to_regclass('MINESWEEPER_VIEW') IS NULL THEN 0 ELSE 1 END;

-- read-only, ran during the dry run:
SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'citus';

-- read-only, ran during the dry run:
SELECT s.attname::text, s.correlation::float8, (pg_relation_size(to_regclass('MINESWEEPER_BOARD')) + pg_indexes_size(to_regclass('MINESWEEPER_BOARD')))::int8, pg_size_bytes(current_setting('effective_cache_size'))::int8, (SELECT u.n_mod_since_analyze::float8 / GREATEST(u.n_live_tup, 1) FROM pg_stat_all_tables u WHERE u.relid = to_regclass('MINESWEEPER_BOARD')) FROM pg_stats s WHERE NOT s.inherited AND (s.schemaname, s.tablename) = (SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass('MINESWEEPER_BOARD') AND c.relkind IN ('r', 'm'));

BEGIN;

CREATE TABLE MINESWEEPER_VIEW (
  "y" BIGINT NOT NULL,
  "1" VARCHAR(1),
  "2" VARCHAR(1),
  "3" VARCHAR(1),
  "4" VARCHAR(1),
  "5" VARCHAR(1),
  "6" VARCHAR(1),
  "7" VARCHAR(1),
  "8" VARCHAR(1),
  "9" VARCHAR(1),
  "10" VARCHAR(1),
  PRIMARY KEY ("y")
);

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.a, s.v FROM (SELECT y AS e0, x AS a, state AS v
  FROM MINESWEEPER_BOARD) s ORDER BY s.e0;

-- stream: wide rows loaded in batches by binary COPY (by multi-row INSERT where a column's type has no binary encoder here)
COPY MINESWEEPER_VIEW ("y", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10") FROM STDIN (FORMAT binary);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT("1"), COUNT("2"), COUNT("3"), COUNT("4"), COUNT("5"), COUNT("6"), COUNT("7"), COUNT("8"), COUNT("9"), COUNT("10") FROM MINESWEEPER_VIEW;

COMMIT;
