-- eavpivot dry run: job sudoku_sql on oracle (golden test, no connection)
-- sudoku_solve engine: sql: a recursive CTE solves and pivots in the database
-- note: oracle: an empty string is NULL in Oracle, so empty values are NULL cells (not counted as values) and empty attribute names are treated as NULL names (pivot.empty_names); no value read from Oracle is an empty string
-- note: oracle: DDL commits on its own and two tables cannot swap names at once: a replaced target is renamed aside before the new table takes its name, so a reader may find no table for that moment
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
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(LENGTHB(s.v)) AS min_bytes, MAX(LENGTHB(s.v)) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0, COUNT(*) - COUNT(s.e1) AS null_e1
FROM (SELECT puzzle AS e0, row AS e1, '|' || col AS a, value AS v
  FROM SUDOKU_GIVENS) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0, s.e1 FROM (SELECT puzzle AS e0, row AS e1, '|' || col AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT CASE WHEN DBMS_LOCK.REQUEST(ORA_HASH('eavpivot:' || SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') || '.' || 'SUDOKU_GRID_SQL', 1073741823), 6, 0) IN (0, 4) THEN 1 ELSE 0 END, NULL FROM dual;

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND table_name = 'SUDOKU_GRID_SQL';

-- read-only, ran during the dry run:
SELECT COUNT(DISTINCT puzzle) FROM SUDOKU_GIVENS;

CREATE TABLE SUDOKU_GRID_SQL__eavpivot_RUNTAG (
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

SET TRANSACTION READ WRITE;

INSERT INTO SUDOKU_GRID_SQL__eavpivot_RUNTAG ("PUZZLE", "ROW", "1", "2", "3", "4", "5", "6", "7", "8", "9")
WITH sdk_k(k) AS (SELECT 1 FROM dual UNION ALL SELECT 2 FROM dual UNION ALL SELECT 3 FROM dual UNION ALL SELECT 4 FROM dual UNION ALL SELECT 5 FROM dual UNION ALL SELECT 6 FROM dual UNION ALL SELECT 7 FROM dual UNION ALL SELECT 8 FROM dual UNION ALL SELECT 9 FROM dual),
sdk_givens(p, r, c, v) AS (
  SELECT puzzle AS p, CAST(row AS INTEGER) AS r, CAST(col AS INTEGER) AS c, CAST(value AS INTEGER) AS v
  FROM SUDOKU_GIVENS
),
sdk_invalid(p) AS (
  SELECT p FROM sdk_givens WHERE v IS NOT NULL AND (r < 1 OR r > 9 OR c < 1 OR c > 9 OR v < 1 OR v > 9)
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, c HAVING MIN(v) <> MAX(v)
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, v HAVING COUNT(DISTINCT c) > 1
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, c, v HAVING COUNT(DISTINCT r) > 1
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, TRUNC((r - 1) / 3), TRUNC((c - 1) / 3), v HAVING COUNT(DISTINCT (r - 1) * 9 + c) > 1
),
sdk_start(p, s) AS (
  SELECT q.p, LISTAGG(COALESCE(substr('123456789', g.v, 1), '.')) WITHIN GROUP (ORDER BY cell.i)
  FROM (SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p
        HAVING COUNT(DISTINCT (r - 1) * 9 + c) >= 17
          AND p NOT IN (SELECT p FROM sdk_invalid)) q
  CROSS JOIN (SELECT (rr.k - 1) * 9 + cc.k AS i, rr.k AS r, cc.k AS c
              FROM sdk_k rr CROSS JOIN sdk_k cc) cell
  LEFT JOIN (SELECT p, r, c, MAX(v) AS v FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, c) g
    ON g.p = q.p AND g.r = cell.r AND g.c = cell.c
  GROUP BY q.p
),
sdk_search(p, s, ind) AS (
  SELECT p, s, INSTR(s, '.') FROM sdk_start
  UNION ALL
  SELECT x.p, substr(x.s, 1, x.ind - 1) || d.z || substr(x.s, x.ind + 1, 81), INSTR(substr(x.s, 1, x.ind - 1) || d.z || substr(x.s, x.ind + 1, 81), '.')
  FROM sdk_search x
  JOIN (SELECT substr('123456789', dk.k, 1) AS z FROM sdk_k dk) d ON NOT EXISTS (
    SELECT 1 FROM sdk_k lp
    WHERE d.z = substr(x.s, TRUNC((x.ind - 1) / 9) * 9 + lp.k, 1)
       OR d.z = substr(x.s, MOD((x.ind - 1), 9) + (lp.k - 1) * 9 + 1, 1)
       OR d.z = substr(x.s, TRUNC((TRUNC((x.ind - 1) / 9)) / 3) * 27 + TRUNC((MOD((x.ind - 1), 9)) / 3) * 3 + TRUNC((lp.k - 1) / 3) * 9 + MOD((lp.k - 1), 3) + 1, 1))
  WHERE x.ind > 0
),
sdk_solved(p, s) AS (
  SELECT p, MIN(s) FROM sdk_search WHERE ind = 0
  GROUP BY p HAVING COUNT(*) = 1
)
SELECT sv.p,
  rw.k,
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 1, 1)),
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 2, 1)),
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 3, 1)),
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 4, 1)),
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 5, 1)),
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 6, 1)),
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 7, 1)),
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 8, 1)),
  INSTR('123456789', substr(sv.s, (rw.k - 1) * 9 + 9, 1))
FROM sdk_solved sv CROSS JOIN sdk_k rw;

-- verify: every solved puzzle wrote n full rows (rows, then non-null cells per column)
SELECT COUNT(*), COUNT("1"), COUNT("2"), COUNT("3"), COUNT("4"), COUNT("5"), COUNT("6"), COUNT("7"), COUNT("8"), COUNT("9") FROM SUDOKU_GRID_SQL__eavpivot_RUNTAG;

COMMIT;

ALTER TABLE SUDOKU_GRID_SQL__eavpivot_RUNTAG RENAME TO SUDOKU_GRID_SQL;
