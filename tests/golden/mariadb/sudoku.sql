-- eavpivot dry run: job sudoku on mariadb (golden test, no connection)
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
SELECT s.v FROM (SELECT puzzle AS e0, row AS e1, CAST(CONVERT(col USING utf8mb4) AS BINARY) AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(OCTET_LENGTH(CONVERT(s.v USING utf8mb4))) AS min_bytes, MAX(OCTET_LENGTH(CONVERT(s.v USING utf8mb4))) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0, COUNT(*) - COUNT(s.e1) AS null_e1
FROM (SELECT puzzle AS e0, row AS e1, CAST(CONVERT(col USING utf8mb4) AS BINARY) AS a, value AS v
  FROM SUDOKU_GIVENS) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0, s.e1 FROM (SELECT puzzle AS e0, row AS e1, CAST(CONVERT(col USING utf8mb4) AS BINARY) AS a, value AS v
  FROM SUDOKU_GIVENS) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT GET_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'5355444F4B555F47524944' USING utf8mb4)))), 0), IS_USED_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'5355444F4B555F47524944' USING utf8mb4)))));

-- read-only, ran during the dry run:
SELECT table_name, table_comment FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND table_name LIKE CONVERT(X'5355444F4B55215F4752494425' USING utf8mb4) ESCAPE '!' AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) LIKE CAST(CONVERT(X'5355444F4B55215F4752494425' USING utf8mb4) AS BINARY) ESCAPE '!');

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND (table_name = CONVERT(X'5355444F4B555F47524944' USING utf8mb4) AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) = CAST(CONVERT(X'5355444F4B555F47524944' USING utf8mb4) AS BINARY)));

-- read-only, ran during the dry run:
SELECT CASE WHEN s.default_character_set_name <> 'utf8mb4' THEN CONCAT('DEFAULT CHARSET=utf8mb4', COALESCE((SELECT CONCAT(' COLLATE=', c.collation_name) FROM information_schema.collations c WHERE c.character_set_name = 'utf8mb4' AND c.collation_name = REGEXP_REPLACE(s.default_collation_name, '^utf8(mb3)?_', 'utf8mb4_')), '')) END AS table_options FROM information_schema.schemata s WHERE s.schema_name = DATABASE();

-- read-only, ran during the dry run:
SELECT GET_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'5355444F4B555F475249445F737461747573' USING utf8mb4)))), 0), IS_USED_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'5355444F4B555F475249445F737461747573' USING utf8mb4)))));

-- read-only, ran during the dry run:
SELECT table_name, table_comment FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND table_name LIKE CONVERT(X'5355444F4B55215F47524944215F73746174757325' USING utf8mb4) ESCAPE '!' AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) LIKE CAST(CONVERT(X'5355444F4B55215F47524944215F73746174757325' USING utf8mb4) AS BINARY) ESCAPE '!');

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND (table_name = CONVERT(X'5355444F4B555F475249445F737461747573' USING utf8mb4) AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) = CAST(CONVERT(X'5355444F4B555F475249445F737461747573' USING utf8mb4) AS BINARY)));

-- read-only, ran during the dry run:
SELECT CASE WHEN s.default_character_set_name <> 'utf8mb4' THEN CONCAT('DEFAULT CHARSET=utf8mb4', COALESCE((SELECT CONCAT(' COLLATE=', c.collation_name) FROM information_schema.collations c WHERE c.character_set_name = 'utf8mb4' AND c.collation_name = REGEXP_REPLACE(s.default_collation_name, '^utf8(mb3)?_', 'utf8mb4_')), '')) END AS table_options FROM information_schema.schemata s WHERE s.schema_name = DATABASE();

CREATE TABLE SUDOKU_GRID__eavpivot_RUNTAG (
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
) COMMENT = 'eavpivot job sudoku run RUNTAG';

CREATE TABLE SUDOKU_GRID_status__eavpivot_RUNTAG (
  `puzzle` LONGTEXT,
  `status` LONGTEXT,
  `solutions` BIGINT,
  `search_nodes` BIGINT,
  `givens` BIGINT,
  `detail` LONGTEXT
) COMMENT = 'eavpivot job sudoku run RUNTAG';

START TRANSACTION;

-- stream: read key-value rows in entity order, pivot in eavpivot
SELECT s.e0, s.e1, s.a, s.v FROM (SELECT puzzle AS e0, row AS e1, CAST(CONVERT(col USING utf8mb4) AS BINARY) AS a, value AS v
  FROM SUDOKU_GIVENS) s ORDER BY s.e0, s.e1;

-- stream: wide rows loaded in batches by LOAD DATA LOCAL (by multi-row INSERT where the server's local_infile is off or a batch holds floats)
LOAD DATA LOCAL INFILE 'eavpivot-stream' INTO TABLE SUDOKU_GRID__eavpivot_RUNTAG CHARACTER SET binary FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' LINES TERMINATED BY X'0A' (`puzzle`, `row`, `1`, `2`, `3`, `4`, `5`, `6`, `7`, `8`, `9`);

-- companion table rows loaded in batches, statement shape for one row
INSERT INTO SUDOKU_GRID_status__eavpivot_RUNTAG (`puzzle`, `status`, `solutions`, `search_nodes`, `givens`, `detail`) VALUES (?, ?, ?, ?, ?, ?);

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT(`1`), COUNT(`2`), COUNT(`3`), COUNT(`4`), COUNT(`5`), COUNT(`6`), COUNT(`7`), COUNT(`8`), COUNT(`9`) FROM SUDOKU_GRID__eavpivot_RUNTAG;

COMMIT;

RENAME TABLE SUDOKU_GRID__eavpivot_RUNTAG TO SUDOKU_GRID;

RENAME TABLE SUDOKU_GRID_status__eavpivot_RUNTAG TO SUDOKU_GRID_status;
