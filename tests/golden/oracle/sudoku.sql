-- eavpivot dry run: job sudoku on oracle (golden test, no connection)
-- auto: transforms run in the streaming path
-- note: oracle: an empty string is NULL in Oracle, so empty values are NULL cells (not counted as values) and empty attribute names are treated as NULL names (pivot.empty_names); no value read from Oracle is an empty string
-- note: oracle: DDL commits on its own and two tables cannot swap names at once: a replaced target is renamed aside before the new table takes its name, so a reader may find no table for that moment
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
SELECT s.v FROM (SELECT puzzle AS e0, row AS e1, '|' || col AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(LENGTHB(s.v)) AS min_bytes, MAX(LENGTHB(s.v)) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0, COUNT(*) - COUNT(s.e1) AS null_e1
FROM (SELECT puzzle AS e0, row AS e1, '|' || col AS a, value AS v
  FROM SUDOKU_GIVENS) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0, s.e1 FROM (SELECT puzzle AS e0, row AS e1, '|' || col AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT CASE WHEN DBMS_LOCK.REQUEST(ORA_HASH('eavpivot:' || SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') || '.' || 'SUDOKU_GRID', 1073741823), 6, 0) IN (0, 4) THEN 1 ELSE 0 END, NULL FROM dual;

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND table_name = 'SUDOKU_GRID';

-- read-only, ran during the dry run:
SELECT CASE WHEN DBMS_LOCK.REQUEST(ORA_HASH('eavpivot:' || SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') || '.' || 'SUDOKU_GRID_STATUS', 1073741823), 6, 0) IN (0, 4) THEN 1 ELSE 0 END, NULL FROM dual;

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND table_name = 'SUDOKU_GRID_STATUS';

CREATE TABLE SUDOKU_GRID__eavpivot_RUNTAG (
  "PUZZLE" NUMBER(19) NOT NULL,
  "ROW" NUMBER(19) NOT NULL,
  "1" INTEGER,
  "2" INTEGER,
  "3" INTEGER,
  "4" INTEGER,
  "5" INTEGER,
  "6" INTEGER,
  "7" INTEGER,
  "8" INTEGER,
  "9" INTEGER,
  PRIMARY KEY ("PUZZLE", "ROW")
);

CREATE TABLE SUDOKU_GRID_status__eavpivot_RUNTAG (
  "puzzle" CLOB,
  "status" CLOB,
  "solutions" NUMBER(19),
  "search_nodes" NUMBER(19),
  "givens" NUMBER(19),
  "detail" CLOB
);

SET TRANSACTION READ WRITE;

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.e1, s.a, s.v FROM (SELECT puzzle AS e0, row AS e1, '|' || col AS a, value AS v
  FROM SUDOKU_GIVENS) s ORDER BY s.e0, s.e1;

-- stream: wide rows loaded in batches of multi-row INSERTs (statement shape for one row)
INSERT INTO SUDOKU_GRID__eavpivot_RUNTAG ("PUZZLE", "ROW", "1", "2", "3", "4", "5", "6", "7", "8", "9") VALUES (:1, :2, :3, :4, :5, :6, :7, :8, :9, :10, :11);

-- companion table rows loaded in batches, statement shape for one row
INSERT INTO SUDOKU_GRID_status__eavpivot_RUNTAG ("puzzle", "status", "solutions", "search_nodes", "givens", "detail") VALUES (:1, :2, :3, :4, :5, :6);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT("1"), COUNT("2"), COUNT("3"), COUNT("4"), COUNT("5"), COUNT("6"), COUNT("7"), COUNT("8"), COUNT("9") FROM SUDOKU_GRID__eavpivot_RUNTAG;

COMMIT;

ALTER TABLE SUDOKU_GRID__eavpivot_RUNTAG RENAME TO SUDOKU_GRID;

ALTER TABLE SUDOKU_GRID_status__eavpivot_RUNTAG RENAME TO SUDOKU_GRID_status;
