-- eavpivot dry run: job sudoku on sqlite (golden test, no connection)
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
SELECT s.v FROM (SELECT puzzle AS e0, row AS e1, col COLLATE BINARY AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT s.a, LENGTH(CAST(s.v AS BLOB)) AS b, CASE WHEN s.e0 IS NULL THEN 1 ELSE 0 END AS null_e0, CASE WHEN s.e1 IS NULL THEN 1 ELSE 0 END AS null_e1
FROM (SELECT puzzle AS e0, row AS e1, col COLLATE BINARY AS a, value AS v
  FROM SUDOKU_GIVENS) s;

-- read-only, ran during the dry run:
SELECT s.e0, s.e1 FROM (SELECT puzzle AS e0, row AS e1, col COLLATE BINARY AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'SUDOKU_GRID' COLLATE NOCASE;

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'SUDOKU_GRID_status' COLLATE NOCASE;

BEGIN;

CREATE TABLE SUDOKU_GRID (
  "puzzle" INT NOT NULL,
  "row" INT NOT NULL,
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
  "puzzle" TEXT,
  "status" TEXT,
  "solutions" INTEGER,
  "search_nodes" INTEGER,
  "givens" INTEGER,
  "detail" TEXT
);

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.e1, s.a, s.v FROM (SELECT puzzle AS e0, row AS e1, col COLLATE BINARY AS a, value AS v
  FROM SUDOKU_GIVENS) s ORDER BY s.e0, s.e1;

-- stream: wide rows loaded in batches of multi-row INSERTs (statement shape for one row)
INSERT INTO SUDOKU_GRID ("puzzle", "row", "1", "2", "3", "4", "5", "6", "7", "8", "9") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- companion table rows loaded in batches, statement shape for one row
INSERT INTO SUDOKU_GRID_status ("puzzle", "status", "solutions", "search_nodes", "givens", "detail") VALUES (?, ?, ?, ?, ?, ?);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT("1"), COUNT("2"), COUNT("3"), COUNT("4"), COUNT("5"), COUNT("6"), COUNT("7"), COUNT("8"), COUNT("9") FROM SUDOKU_GRID;

COMMIT;
