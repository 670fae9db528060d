-- eavpivot dry run: job sudoku_sql on mssql (golden test, no connection)
-- sudoku_solve engine: sql: a recursive CTE solves and pivots in the database
-- attribute -> column:
--   1 -> 1 (SUDOKU_GRID_SQL)
--   2 -> 2 (SUDOKU_GRID_SQL)
--   3 -> 3 (SUDOKU_GRID_SQL)
--   4 -> 4 (SUDOKU_GRID_SQL)
--   5 -> 5 (SUDOKU_GRID_SQL)
--   6 -> 6 (SUDOKU_GRID_SQL)
--   7 -> 7 (SUDOKU_GRID_SQL)
--   8 -> 8 (SUDOKU_GRID_SQL)
--   9 -> 9 (SUDOKU_GRID_SQL)

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(DATALENGTH(CAST(s.v AS NVARCHAR(MAX)))) AS min_bytes, MAX(DATALENGTH(CAST(s.v AS NVARCHAR(MAX)))) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0, COUNT(*) - COUNT(s.e1) AS null_e1
FROM (SELECT puzzle AS e0, row AS e1, (CAST(col AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, value AS v
  FROM SUDOKU_GIVENS) s
GROUP BY s.a;

-- read-only, ran during the dry run:
EXEC sp_describe_first_result_set @tsql = N'SELECT s.e0, s.e1 FROM (SELECT puzzle AS e0, row AS e1, (CAST(col AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0';

-- read-only, ran during the dry run:
SELECT CASE WHEN OBJECT_ID(N'SUDOKU_GRID_SQL', N'U') IS NULL THEN 0 ELSE 1 END;

-- read-only, ran during the dry run:
SELECT COUNT(DISTINCT puzzle) FROM SUDOKU_GIVENS;

SET XACT_ABORT ON; SET NOCOUNT OFF; BEGIN TRANSACTION;

CREATE TABLE SUDOKU_GRID_SQL (
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

WITH sdk_givens(p, r, c, v) AS (
  SELECT puzzle AS p, CAST(row AS INTEGER) AS r, CAST(col AS INTEGER) AS c, CAST(value AS INTEGER) AS v
  FROM SUDOKU_GIVENS
),
sdk_invalid(p) AS (
  SELECT p FROM sdk_givens WHERE v IS NOT NULL AND (r < 1 OR r > 9 OR c < 1 OR c > 9 OR v < 1 OR v > 9)
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, c HAVING MIN(v) <> MAX(v)
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, v HAVING COUNT(DISTINCT c) > 1
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, c, v HAVING COUNT(DISTINCT r) > 1
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, (r - 1) / 3, (c - 1) / 3, v HAVING COUNT(DISTINCT (r - 1) * 9 + c) > 1
),
sdk_start(p, s) AS (
  SELECT q.p, CONVERT(VARCHAR(81), MAX(CASE WHEN cell.i = 1 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 2 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 3 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 4 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 5 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 6 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 7 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 8 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 9 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 10 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 11 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 12 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 13 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 14 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 15 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 16 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 17 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 18 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 19 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 20 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 21 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 22 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 23 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 24 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 25 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 26 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 27 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 28 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 29 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 30 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 31 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 32 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 33 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 34 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 35 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 36 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 37 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 38 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 39 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 40 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 41 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 42 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 43 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 44 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 45 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 46 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 47 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 48 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 49 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 50 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 51 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 52 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 53 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 54 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 55 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 56 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 57 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 58 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 59 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 60 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 61 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 62 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 63 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 64 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 65 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 66 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 67 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 68 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 69 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 70 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 71 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 72 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 73 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 74 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 75 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 76 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 77 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 78 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 79 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 80 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END)
    + MAX(CASE WHEN cell.i = 81 THEN COALESCE(SUBSTRING('123456789', g.v, 1), '.') END))
  FROM (SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p
        HAVING COUNT(DISTINCT (r - 1) * 9 + c) >= 17
          AND p NOT IN (SELECT p FROM sdk_invalid)) q
  CROSS JOIN (SELECT (rr.k - 1) * 9 + cc.k AS i, rr.k AS r, cc.k AS c
              FROM (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS rr(k) CROSS JOIN (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS cc(k)) cell
  LEFT JOIN (SELECT p, r, c, MAX(v) AS v FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, c) g
    ON g.p = q.p AND g.r = cell.r AND g.c = cell.c
  GROUP BY q.p
),
sdk_search(p, s, ind) AS (
  SELECT p, s, CHARINDEX('.', s) FROM sdk_start
  UNION ALL
  SELECT x.p, CONVERT(VARCHAR(81), CONCAT(SUBSTRING(x.s, 1, x.ind - 1), d.z, SUBSTRING(x.s, x.ind + 1, 81))), CHARINDEX('.', CONVERT(VARCHAR(81), CONCAT(SUBSTRING(x.s, 1, x.ind - 1), d.z, SUBSTRING(x.s, x.ind + 1, 81))))
  FROM sdk_search x
  JOIN (SELECT SUBSTRING('123456789', dk.k, 1) AS z FROM (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS dk(k)) d ON NOT EXISTS (
    SELECT 1 FROM (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS lp(k)
    WHERE d.z = SUBSTRING(x.s, (x.ind - 1) / 9 * 9 + lp.k, 1)
       OR d.z = SUBSTRING(x.s, (x.ind - 1) % 9 + (lp.k - 1) * 9 + 1, 1)
       OR d.z = SUBSTRING(x.s, ((x.ind - 1) / 9) / 3 * 27 + ((x.ind - 1) % 9) / 3 * 3 + (lp.k - 1) / 3 * 9 + (lp.k - 1) % 3 + 1, 1))
  WHERE x.ind > 0
),
sdk_solved(p, s) AS (
  SELECT p, MIN(s) FROM sdk_search WHERE ind = 0
  GROUP BY p HAVING COUNT(*) = 1
)
INSERT INTO SUDOKU_GRID_SQL ([puzzle], [row], [1], [2], [3], [4], [5], [6], [7], [8], [9])
SELECT sv.p,
  rw.k,
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 1, 1), '123456789'),
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 2, 1), '123456789'),
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 3, 1), '123456789'),
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 4, 1), '123456789'),
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 5, 1), '123456789'),
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 6, 1), '123456789'),
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 7, 1), '123456789'),
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 8, 1), '123456789'),
  CHARINDEX(SUBSTRING(sv.s, (rw.k - 1) * 9 + 9, 1), '123456789')
FROM sdk_solved sv CROSS JOIN (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS rw(k);

-- verify: every solved puzzle wrote n full rows (rows, then non-null cells per column)
SELECT COUNT(*), COUNT([1]), COUNT([2]), COUNT([3]), COUNT([4]), COUNT([5]), COUNT([6]), COUNT([7]), COUNT([8]), COUNT([9]) FROM SUDOKU_GRID_SQL;

COMMIT TRANSACTION;
