-- eavpivot dry run: job sudoku on mssql (golden test, no connection)
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
EXEC sp_describe_first_result_set @tsql = N'SELECT s.v FROM (SELECT puzzle AS e0, row AS e1, (CAST(col AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0';

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(DATALENGTH(CAST(s.v AS NVARCHAR(MAX)))) AS min_bytes, MAX(DATALENGTH(CAST(s.v AS NVARCHAR(MAX)))) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0, COUNT(*) - COUNT(s.e1) AS null_e1
FROM (SELECT puzzle AS e0, row AS e1, (CAST(col AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, value AS v
  FROM SUDOKU_GIVENS) s
GROUP BY s.a;

-- read-only, ran during the dry run:
EXEC sp_describe_first_result_set @tsql = N'SELECT s.e0, s.e1 FROM (SELECT puzzle AS e0, row AS e1, (CAST(col AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0';

-- read-only, ran during the dry run:
SELECT CASE WHEN OBJECT_ID(N'SUDOKU_GRID', N'U') IS NULL THEN 0 ELSE 1 END;

-- read-only, ran during the dry run:
SELECT CASE WHEN OBJECT_ID(N'SUDOKU_GRID_status', N'U') IS NULL THEN 0 ELSE 1 END;

SET XACT_ABORT ON; SET NOCOUNT OFF; BEGIN TRANSACTION;

CREATE TABLE SUDOKU_GRID (
  [puzzle] BIGINT NOT NULL,
  [row] BIGINT NOT NULL,
  [1] INTEGER,
  [2] INTEGER,
  [3] INTEGER,
  [4] INTEGER,
  [5] INTEGER,
  [6] INTEGER,
  [7] INTEGER,
  [8] INTEGER,
  [9] INTEGER,
  PRIMARY KEY ([puzzle], [row])
);

CREATE TABLE SUDOKU_GRID_status (
  [puzzle] NVARCHAR(MAX),
  [status] NVARCHAR(MAX),
  [solutions] BIGINT,
  [search_nodes] BIGINT,
  [givens] BIGINT,
  [detail] NVARCHAR(MAX)
);

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.e1, s.a, s.v FROM (SELECT puzzle AS e0, row AS e1, (CAST(col AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, value AS v
  FROM SUDOKU_GIVENS) s ORDER BY s.e0, s.e1;

-- stream: wide rows bulk loaded in batches, each column typed as the server describes it (by multi-row INSERT where a value cannot be sent exactly)
INSERT BULK SUDOKU_GRID ([puzzle], [row], [1], [2], [3], [4], [5], [6], [7], [8], [9]) WITH (CHECK_CONSTRAINTS, KEEP_NULLS, FIRE_TRIGGERS);

-- companion table rows loaded in batches, statement shape for one row
INSERT INTO SUDOKU_GRID_status ([puzzle], [status], [solutions], [search_nodes], [givens], [detail]) VALUES (@P1, @P2, @P3, @P4, @P5, @P6);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT([1]), COUNT([2]), COUNT([3]), COUNT([4]), COUNT([5]), COUNT([6]), COUNT([7]), COUNT([8]), COUNT([9]) FROM SUDOKU_GRID;

COMMIT TRANSACTION;
