-- eavpivot dry run: job minesweeper on mariadb (golden test, no connection)
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
SELECT s.v FROM (SELECT y AS e0, CAST(CONVERT(x USING utf8mb4) AS BINARY) AS a, state AS v
  FROM MINESWEEPER_BOARD) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(OCTET_LENGTH(CONVERT(s.v USING utf8mb4))) AS min_bytes, MAX(OCTET_LENGTH(CONVERT(s.v USING utf8mb4))) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0
FROM (SELECT y AS e0, CAST(CONVERT(x USING utf8mb4) AS BINARY) AS a, state AS v
  FROM MINESWEEPER_BOARD) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0 FROM (SELECT y AS e0, CAST(CONVERT(x USING utf8mb4) AS BINARY) AS a, state AS v
  FROM MINESWEEPER_BOARD) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT GET_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'4D494E45535745455045525F56494557' USING utf8mb4)))), 0), IS_USED_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'4D494E45535745455045525F56494557' USING utf8mb4)))));

-- read-only, ran during the dry run:
SELECT table_name, table_comment FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND table_name LIKE CONVERT(X'4D494E4553574545504552215F5649455725' USING utf8mb4) ESCAPE '!' AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) LIKE CAST(CONVERT(X'4D494E4553574545504552215F5649455725' USING utf8mb4) AS BINARY) ESCAPE '!');

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND (table_name = CONVERT(X'4D494E45535745455045525F56494557' USING utf8mb4) AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) = CAST(CONVERT(X'4D494E45535745455045525F56494557' USING utf8mb4) AS BINARY)));

-- read-only, ran during the dry run:
SELECT CASE WHEN s.default_character_set_name <> 'utf8mb4' THEN CONCAT('DEFAULT CHARSET=utf8mb4', COALESCE((SELECT CONCAT(' COLLATE=', c.collation_name) FROM information_schema.collations c WHERE c.character_set_name = 'utf8mb4' AND c.collation_name = REGEXP_REPLACE(s.default_collation_name, '^utf8(mb3)?_', 'utf8mb4_')), '')) END AS table_options FROM information_schema.schemata s WHERE s.schema_name = DATABASE();

CREATE TABLE MINESWEEPER_VIEW__eavpivot_RUNTAG (
  `y` BIGINT NOT NULL,
  `1` VARCHAR(1),
  `2` VARCHAR(1),
  `3` VARCHAR(1),
  `4` VARCHAR(1),
  `5` VARCHAR(1),
  `6` VARCHAR(1),
  `7` VARCHAR(1),
  `8` VARCHAR(1),
  `9` VARCHAR(1),
  `10` VARCHAR(1),
  PRIMARY KEY (`y`)
) COMMENT = 'eavpivot job minesweeper run RUNTAG';

START TRANSACTION;

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.a, s.v FROM (SELECT y AS e0, CAST(CONVERT(x USING utf8mb4) AS BINARY) AS a, state AS v
  FROM MINESWEEPER_BOARD) s ORDER BY s.e0;

-- stream: wide rows loaded in batches by LOAD DATA LOCAL (by multi-row INSERT where the server's local_infile is off or a batch holds floats)
LOAD DATA LOCAL INFILE 'eavpivot-stream' INTO TABLE MINESWEEPER_VIEW__eavpivot_RUNTAG CHARACTER SET binary FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' LINES TERMINATED BY X'0A' (`y`, `1`, `2`, `3`, `4`, `5`, `6`, `7`, `8`, `9`, `10`);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT(`1`), COUNT(`2`), COUNT(`3`), COUNT(`4`), COUNT(`5`), COUNT(`6`), COUNT(`7`), COUNT(`8`), COUNT(`9`), COUNT(`10`) FROM MINESWEEPER_VIEW__eavpivot_RUNTAG;

COMMIT;

RENAME TABLE MINESWEEPER_VIEW__eavpivot_RUNTAG TO MINESWEEPER_VIEW;
