-- eavpivot dry run: job minesweeper on oracle (golden test, no connection)
-- auto: transforms run in the streaming path
-- note: oracle: an empty string is NULL in Oracle, so empty values are NULL cells (not counted as values) and empty attribute names are treated as NULL names (pivot.empty_names); no value read from Oracle is an empty string
-- note: oracle: DDL commits on its own and two tables cannot swap names at once: a replaced target is renamed aside before the new table takes its name, so a reader may find no table for that moment
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
SELECT s.v FROM (SELECT y AS e0, '|' || x AS a, state AS v
  FROM MINESWEEPER_BOARD) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(LENGTHB(s.v)) AS min_bytes, MAX(LENGTHB(s.v)) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0
FROM (SELECT y AS e0, '|' || x AS a, state AS v
  FROM MINESWEEPER_BOARD) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0 FROM (SELECT y AS e0, '|' || x AS a, state AS v
  FROM MINESWEEPER_BOARD) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT CASE WHEN DBMS_LOCK.REQUEST(ORA_HASH('eavpivot:' || SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') || '.' || 'MINESWEEPER_VIEW', 1073741823), 6, 0) IN (0, 4) THEN 1 ELSE 0 END, NULL FROM dual;

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND table_name = 'MINESWEEPER_VIEW';

CREATE TABLE MINESWEEPER_VIEW__eavpivot_RUNTAG (
  "Y" NUMBER(19) NOT NULL,
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
  PRIMARY KEY ("Y")
);

SET TRANSACTION READ WRITE;

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.a, s.v FROM (SELECT y AS e0, '|' || x AS a, state AS v
  FROM MINESWEEPER_BOARD) s ORDER BY s.e0;

-- stream: wide rows loaded in batches of multi-row INSERTs (statement shape for one row)
INSERT INTO MINESWEEPER_VIEW__eavpivot_RUNTAG ("Y", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10") VALUES (:1, :2, :3, :4, :5, :6, :7, :8, :9, :10, :11);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT("1"), COUNT("2"), COUNT("3"), COUNT("4"), COUNT("5"), COUNT("6"), COUNT("7"), COUNT("8"), COUNT("9"), COUNT("10") FROM MINESWEEPER_VIEW__eavpivot_RUNTAG;

COMMIT;

ALTER TABLE MINESWEEPER_VIEW__eavpivot_RUNTAG RENAME TO MINESWEEPER_VIEW;
