-- eavpivot dry run: job sudoku_sql on mariadb (golden test, no connection)
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
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(OCTET_LENGTH(CONVERT(s.v USING utf8mb4))) AS min_bytes, MAX(OCTET_LENGTH(CONVERT(s.v USING utf8mb4))) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0, COUNT(*) - COUNT(s.e1) AS null_e1
FROM (SELECT puzzle AS e0, row AS e1, CAST(CONVERT(col USING utf8mb4) AS BINARY) AS a, value AS v
  FROM SUDOKU_GIVENS) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0, s.e1 FROM (SELECT puzzle AS e0, row AS e1, CAST(CONVERT(col USING utf8mb4) AS BINARY) AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT GET_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'5355444F4B555F475249445F53514C' USING utf8mb4)))), 0), IS_USED_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'5355444F4B555F475249445F53514C' USING utf8mb4)))));

-- read-only, ran during the dry run:
SELECT table_name, table_comment FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND table_name LIKE CONVERT(X'5355444F4B55215F47524944215F53514C25' USING utf8mb4) ESCAPE '!' AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) LIKE CAST(CONVERT(X'5355444F4B55215F47524944215F53514C25' USING utf8mb4) AS BINARY) ESCAPE '!');

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND (table_name = CONVERT(X'5355444F4B555F475249445F53514C' USING utf8mb4) AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) = CAST(CONVERT(X'5355444F4B555F475249445F53514C' USING utf8mb4) AS BINARY)));

-- read-only, ran during the dry run:
SELECT CASE WHEN s.default_character_set_name <> 'utf8mb4' THEN CONCAT('DEFAULT CHARSET=utf8mb4', COALESCE((SELECT CONCAT(' COLLATE=', c.collation_name) FROM information_schema.collations c WHERE c.character_set_name = 'utf8mb4' AND c.collation_name = REGEXP_REPLACE(s.default_collation_name, '^utf8(mb3)?_', 'utf8mb4_')), '')) END AS table_options FROM information_schema.schemata s WHERE s.schema_name = DATABASE();

-- read-only, ran during the dry run:
SELECT COUNT(DISTINCT puzzle) FROM SUDOKU_GIVENS;

CREATE TABLE SUDOKU_GRID_SQL__eavpivot_RUNTAG (
  `puzzle` BIGINT NOT NULL,
  `row` BIGINT NOT NULL,
  `1` INTEGER,
  `2` INTEGER,
  `3` INTEGER,
  `4` INTEGER,
  `5` INTEGER,
  `6` INTEGER,
  `7` INTEGER,
  `8` INTEGER,
  `9` INTEGER,
  PRIMARY KEY (`puzzle`, `row`)
) COMMENT = 'eavpivot job sudoku_sql run RUNTAG';

START TRANSACTION;

INSERT INTO SUDOKU_GRID_SQL__eavpivot_RUNTAG (`puzzle`, `row`, `1`, `2`, `3`, `4`, `5`, `6`, `7`, `8`, `9`)
WITH RECURSIVE sdk_k(k) AS (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9),
sdk_givens(p, r, c, v) AS (
  SELECT puzzle AS p, CAST(row AS SIGNED) AS r, CAST(col AS SIGNED) AS c, CAST(value AS SIGNED) AS v
  FROM SUDOKU_GIVENS
),
sdk_invalid(p) AS (
  SELECT p FROM sdk_givens WHERE v IS NOT NULL AND (r < 1 OR r > 9 OR c < 1 OR c > 9 OR v < 1 OR v > 9)
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, c HAVING MIN(v) <> MAX(v)
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, r, v HAVING COUNT(DISTINCT c) > 1
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, c, v HAVING COUNT(DISTINCT r) > 1
  UNION SELECT p FROM sdk_givens WHERE v IS NOT NULL GROUP BY p, (r - 1) DIV 3, (c - 1) DIV 3, v HAVING COUNT(DISTINCT (r - 1) * 9 + c) > 1
),
sdk_start(p, s) AS (
  SELECT q.p, GROUP_CONCAT(COALESCE(SUBSTRING('123456789', g.v, 1), '.') ORDER BY cell.i SEPARATOR '')
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
  SELECT x.p, CONCAT(SUBSTRING(x.s, 1, x.ind - 1), d.z, SUBSTRING(x.s, x.ind + 1, 81)), INSTR(CONCAT(SUBSTRING(x.s, 1, x.ind - 1), d.z, SUBSTRING(x.s, x.ind + 1, 81)), '.')
  FROM sdk_search x
  JOIN (SELECT SUBSTRING('123456789', dk.k, 1) AS z FROM sdk_k dk) d ON NOT EXISTS (
    SELECT 1 FROM sdk_k lp
    WHERE d.z = SUBSTRING(x.s, (x.ind - 1) DIV 9 * 9 + lp.k, 1)
       OR d.z = SUBSTRING(x.s, (x.ind - 1) % 9 + (lp.k - 1) * 9 + 1, 1)
       OR d.z = SUBSTRING(x.s, ((x.ind - 1) DIV 9) DIV 3 * 27 + ((x.ind - 1) % 9) DIV 3 * 3 + (lp.k - 1) DIV 3 * 9 + (lp.k - 1) % 3 + 1, 1))
  WHERE x.ind > 0
),
sdk_solved(p, s) AS (
  SELECT p, MIN(s) FROM sdk_search WHERE ind = 0
  GROUP BY p HAVING COUNT(*) = 1
)
SELECT sv.p,
  rw.k,
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 1, 1)),
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 2, 1)),
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 3, 1)),
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 4, 1)),
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 5, 1)),
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 6, 1)),
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 7, 1)),
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 8, 1)),
  INSTR('123456789', SUBSTRING(sv.s, (rw.k - 1) * 9 + 9, 1))
FROM sdk_solved sv CROSS JOIN sdk_k rw;

-- verify: every solved puzzle wrote n full rows (rows, then non-null cells per column)
SELECT COUNT(*), COUNT(`1`), COUNT(`2`), COUNT(`3`), COUNT(`4`), COUNT(`5`), COUNT(`6`), COUNT(`7`), COUNT(`8`), COUNT(`9`) FROM SUDOKU_GRID_SQL__eavpivot_RUNTAG;

COMMIT;

RENAME TABLE SUDOKU_GRID_SQL__eavpivot_RUNTAG TO SUDOKU_GRID_SQL;
