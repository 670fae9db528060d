-- eavpivot dry run: job sudoku on postgres (golden test, no connection)
-- auto: transforms run in the streaming path
-- attribute -> column:
--   1 -> 1 (SUDOKU_GRID)
--   2 -> 2 (SUDOKU_GRID)
--   3 -> 3 (SUDOKU_GRID)
--   4 -> 4 (SUDOKU_GRID)
--   5 -> 5 (SUDOKU_GRID)
--   6 -> 6 (SUDOKU_GRID)
--   7 -> 7 (SUDOKU_GRID)
--   8 -> 8 (SUDOKU_GRID)
--   9 -> 9 (SUDOKU_GRID)

-- read-only, ran during the dry run:
SELECT s.v FROM (SELECT puzzle AS e0, row AS e1, col AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT (SELECT COUNT(*) FROM pg_collation WHERE NOT collisdeterministic) + (SELECT COUNT(*) FROM pg_type WHERE typname = 'citext');

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(octet_length((s.v)::text)) AS min_bytes, MAX(octet_length((s.v)::text)) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0, COUNT(*) - COUNT(s.e1) AS null_e1
FROM (SELECT puzzle AS e0, row AS e1, col AS a, value AS v
  FROM SUDOKU_GIVENS) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0, s.e1 FROM (SELECT puzzle AS e0, row AS e1, col AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT CASE WHEN to_regclass('SUDOKU_GRID') IS NULL THEN 0 ELSE 1 END;

-- read-only, ran during the dry run:
SELECT CASE WHEN to_regclass('SUDOKU_GRID_status') IS NULL THEN 0 ELSE 1 END;

-- read-only, ran during the dry run:
SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'citus';

-- read-only, ran during the dry run:
SELECT s.attname::text, s.correlation::float8, (pg_relation_size(to_regclass('SUDOKU_GIVENS')) + pg_indexes_size(to_regclass('SUDOKU_GIVENS')))::int8, pg_size_bytes(current_setting('effective_cache_size'))::int8, (SELECT u.n_mod_since_analyze::float8 / GREATEST(u.n_live_tup, 1) FROM pg_stat_all_tables u WHERE u.relid = to_regclass('SUDOKU_GIVENS')) FROM pg_stats s WHERE NOT s.inherited AND (s.schemaname, s.tablename) = (SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass('SUDOKU_GIVENS') AND c.relkind IN ('r', 'm'));

BEGIN;

CREATE TABLE SUDOKU_GRID (
  "puzzle" BIGINT NOT NULL,
  "row" BIGINT NOT NULL,
  "1" INTEGER,
  "2" INTEGER,
  "3" INTEGER,
  "4" INTEGER,
  "5" INTEGER,
  "6" INTEGER,
  "7" INTEGER,
  "8" INTEGER,
  "9" INTEGER,
  PRIMARY KEY ("puzzle", "row")
);

CREATE TABLE SUDOKU_GRID_status (
  "puzzle" text,
  "status" text,
  "solutions" BIGINT,
  "search_nodes" BIGINT,
  "givens" BIGINT,
  "detail" text
);

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.e1, s.a, s.v FROM (SELECT puzzle AS e0, row AS e1, col AS a, value AS v
  FROM SUDOKU_GIVENS) s ORDER BY s.e0, s.e1;

-- stream: wide rows loaded in batches by binary COPY (by multi-row INSERT where a column's type has no binary encoder here)
COPY SUDOKU_GRID ("puzzle", "row", "1", "2", "3", "4", "5", "6", "7", "8", "9") FROM STDIN (FORMAT binary);

-- companion table rows loaded in batches, statement shape for one row
INSERT INTO SUDOKU_GRID_status ("puzzle", "status", "solutions", "search_nodes", "givens", "detail") VALUES ($1, $2, $3, $4, $5, $6);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT("1"), COUNT("2"), COUNT("3"), COUNT("4"), COUNT("5"), COUNT("6"), COUNT("7"), COUNT("8"), COUNT("9") FROM SUDOKU_GRID;

COMMIT;
