-- eavpivot dry run: job minesweeper on mssql (golden test, no connection)
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
EXEC sp_describe_first_result_set @tsql = N'SELECT s.v FROM (SELECT y AS e0, (CAST(x AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, state AS v
  FROM MINESWEEPER_BOARD) s WHERE 1 = 0';

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(DATALENGTH(CAST(s.v AS NVARCHAR(MAX)))) AS min_bytes, MAX(DATALENGTH(CAST(s.v AS NVARCHAR(MAX)))) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0
FROM (SELECT y AS e0, (CAST(x AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, state AS v
  FROM MINESWEEPER_BOARD) s
GROUP BY s.a;

-- read-only, ran during the dry run:
EXEC sp_describe_first_result_set @tsql = N'SELECT s.e0 FROM (SELECT y AS e0, (CAST(x AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, state AS v
  FROM MINESWEEPER_BOARD) s WHERE 1 = 0';

-- read-only, ran during the dry run:
SELECT CASE WHEN OBJECT_ID(N'MINESWEEPER_VIEW', N'U') IS NULL THEN 0 ELSE 1 END;

SET XACT_ABORT ON; SET NOCOUNT OFF; BEGIN TRANSACTION;

CREATE TABLE MINESWEEPER_VIEW (
  [y] BIGINT NOT NULL,
  [1] VARCHAR(1),
  [2] VARCHAR(1),
  [3] VARCHAR(1),
  [4] VARCHAR(1),
  [5] VARCHAR(1),
  [6] VARCHAR(1),
  [7] VARCHAR(1),
  [8] VARCHAR(1),
  [9] VARCHAR(1),
  [10] VARCHAR(1),
  PRIMARY KEY ([y])
);

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.a, s.v FROM (SELECT y AS e0, (CAST(x AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, state AS v
  FROM MINESWEEPER_BOARD) s ORDER BY s.e0;

-- stream: wide rows bulk loaded in batches, each column typed as the server describes it (by multi-row INSERT where a value cannot be sent exactly)
INSERT BULK MINESWEEPER_VIEW ([y], [1], [2], [3], [4], [5], [6], [7], [8], [9], [10]) WITH (CHECK_CONSTRAINTS, KEEP_NULLS, FIRE_TRIGGERS);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT([1]), COUNT([2]), COUNT([3]), COUNT([4]), COUNT([5]), COUNT([6]), COUNT([7]), COUNT([8]), COUNT([9]), COUNT([10]) FROM MINESWEEPER_VIEW;

COMMIT TRANSACTION;
