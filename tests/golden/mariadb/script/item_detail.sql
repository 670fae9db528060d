-- eavpivot script: job item_detail, ITEM_DETAIL -> ITEM_WIDE, for MariaDB 10.2 or later.
-- Run it with the mariadb client: mariadb DATABASE < this_file.sql (DELIMITER is a client command).
-- 1. Discovers the distinct attribute names on the server as bytes, so names differing only
--    in case or trailing spaces stay distinct; columns in binary name order (eavpivot run orders naturally: 2 before 10).
-- 2. Refuses, before writing anything, column names MariaDB cannot hold (empty, over 64
--    characters, a trailing space, NUL, beyond the BMP), names equal ignoring case, and
--    more than 1017 columns (InnoDB).
-- 3. DDL commits on its own in MariaDB: the table is built as ITEM_WIDE__eavpivot_new, filled with
--    INSERT ... MAX(CASE ...) (names quoted by doubling backticks, values matched by HEX),
--    verified, then swapped in with one RENAME TABLE; on any error it is dropped and the
--    target is left as it was.
SET NAMES utf8mb4;
SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES');
SET SESSION explicit_defaults_for_timestamp = ON;
SET SESSION group_concat_max_len = 1073741824;
DELIMITER //
BEGIN NOT ATOMIC
  DECLARE src LONGTEXT CHARACTER SET utf8mb4 DEFAULT 'SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID';
  DECLARE n_cols INT DEFAULT 0;
  DECLARE bad LONGTEXT CHARACTER SET utf8mb4;
  DECLARE msg VARCHAR(500) CHARACTER SET utf8mb4;
  DECLARE col_defs, col_names, cases LONGTEXT CHARACTER SET utf8mb4;
  DECLARE v_expr LONGTEXT CHARACTER SET utf8mb4 DEFAULT 's.v';
  DECLARE want, before_rows, got BIGINT DEFAULT 0;
  DECLARE staged BOOL DEFAULT FALSE;
  DECLARE table_options LONGTEXT CHARACTER SET utf8mb4;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    GET DIAGNOSTICS CONDITION 1 msg = MESSAGE_TEXT;
    ROLLBACK;
    DROP TEMPORARY TABLE IF EXISTS eavpivot_attrs;
    IF staged THEN
      DROP TABLE IF EXISTS ITEM_WIDE__eavpivot_new;
    END IF;
    SET msg = LEFT(CONCAT('eavpivot script for job item_detail stopped; its staging table was dropped, the target was not touched: ', msg), 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END;
  DROP TEMPORARY TABLE IF EXISTS eavpivot_attrs;
  CREATE TEMPORARY TABLE eavpivot_attrs (ord INT NOT NULL, a LONGBLOB NOT NULL, col LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL);
  INSERT INTO eavpivot_attrs (ord, a, col)
  SELECT n.ord, n.a, CONCAT('', COALESCE(NULL, CONVERT(n.a USING utf8mb4)), '')
  FROM (
    SELECT ROW_NUMBER() OVER (ORDER BY s.a) AS ord, s.a
    FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
      FROM ITEM_DETAIL ID
      JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
      LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
    WHERE s.a NOT IN (CAST('' AS BINARY))
    GROUP BY s.a
  ) n;
  SET n_cols = (SELECT COUNT(*) FROM eavpivot_attrs);
  IF n_cols = 0 THEN
    SET msg = LEFT('eavpivot: no attributes to pivot in ITEM_DETAIL', 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  IF n_cols + 1 > 1017 THEN
    SET msg = LEFT(CONCAT('eavpivot: ', n_cols, ' attribute columns plus 1 key column(s) exceed the InnoDB limit of 1017 columns per table; exclude attributes in the job, or split the target'), 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  SET bad = (SELECT col FROM eavpivot_attrs
    WHERE col = '' OR CHAR_LENGTH(col) > 64 OR col LIKE '% ' OR LOCATE(CONVERT(X'00' USING utf8mb4), col) > 0
       OR col <> CONVERT(CONVERT(col USING utf8mb3) USING utf8mb4)
    ORDER BY ord LIMIT 1);
  IF bad IS NOT NULL THEN
    SET msg = LEFT(CONCAT('eavpivot: column name ''', LEFT(bad, 100), ''' cannot be a MariaDB column: empty, longer than 64 characters, ending in a space, or holding NUL or a character outside the BMP; exclude or rename the attribute in the job'), 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  SET bad = (SELECT MIN(c) FROM (SELECT col AS c FROM eavpivot_attrs UNION ALL SELECT CONVERT('ITEM_ID' USING utf8mb4) COLLATE utf8mb4_bin) k
    GROUP BY LOWER(c) HAVING COUNT(*) > 1 LIMIT 1);
  IF bad IS NOT NULL THEN
    SET msg = LEFT(CONCAT('eavpivot: several attributes (or a key column) become the column ''', LEFT(bad, 100), ''', the same identifier to MariaDB (column names ignore case); rename or exclude them in the job'), 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  IF EXISTS (SELECT MIN(CAST(CONVERT(s.e0 USING utf8mb4) AS BINARY)), MAX(CAST(CONVERT(s.e0 USING utf8mb4) AS BINARY))
FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.e0
HAVING MIN(CAST(CONVERT(s.e0 USING utf8mb4) AS BINARY)) <> MAX(CAST(CONVERT(s.e0 USING utf8mb4) AS BINARY))) THEN
    SET msg = LEFT('eavpivot: the source has entity keys that differ in bytes but are one key to the collation (case, accents or trailing spaces), so grouping by entity would make one row of them; nothing was written: give each entity one spelling, or compare the key by a binary collation', 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  SET @eavpivot_value_collation = NULL;
  EXECUTE IMMEDIATE CONCAT('SELECT COLLATION(s.v) INTO @eavpivot_value_collation FROM (', src, ') s LIMIT 1');
  IF @eavpivot_value_collation <> 'binary' THEN
    SET v_expr = 'CONVERT(s.v USING utf8mb4) COLLATE utf8mb4_nopad_bin';
  END IF;
  SELECT
    GROUP_CONCAT(CONCAT('ADD COLUMN ', CONCAT('`', REPLACE(col, '`', '``'), '`'), ' ', 'LONGTEXT') ORDER BY ord SEPARATOR ', '),
    GROUP_CONCAT(CONCAT('`', REPLACE(col, '`', '``'), '`') ORDER BY ord SEPARATOR ', '),
    GROUP_CONCAT(CONCAT('MAX(CASE WHEN s.a = X''', HEX(a), ''' THEN ', v_expr, ' END) AS ', CONCAT('`', REPLACE(col, '`', '``'), '`')) ORDER BY ord SEPARATOR ', ')
    INTO col_defs, col_names, cases
  FROM eavpivot_attrs;
  IF GREATEST(LENGTH(col_defs), LENGTH(col_names), LENGTH(cases)) >= @@SESSION.group_concat_max_len THEN
    SET msg = LEFT('eavpivot: a column list reached group_concat_max_len and was cut; nothing was written', 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  IF (SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND (table_name = CONVERT(X'4954454D5F574944455F5F6561767069766F745F6E6577' USING utf8mb4) AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) = CAST(CONVERT(X'4954454D5F574944455F5F6561767069766F745F6E6577' USING utf8mb4) AS BINARY)))) > 0 THEN
    SET msg = LEFT('eavpivot: a table named ITEM_WIDE__eavpivot_new already exists; this script never drops a table it did not create: drop or rename it', 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  IF (SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND (table_name = CONVERT(X'4954454D5F574944455F5F6561767069766F745F6F6C64' USING utf8mb4) AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) = CAST(CONVERT(X'4954454D5F574944455F5F6561767069766F745F6F6C64' USING utf8mb4) AS BINARY)))) > 0 THEN
    SET msg = LEFT('eavpivot: a table named ITEM_WIDE__eavpivot_old already exists; this script never drops a table it did not create: drop or rename it', 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  SELECT t.table_options INTO table_options FROM (SELECT CASE WHEN s.default_character_set_name <> 'utf8mb4' THEN CONCAT('DEFAULT CHARSET=utf8mb4', COALESCE((SELECT CONCAT(' COLLATE=', c.collation_name) FROM information_schema.collations c WHERE c.character_set_name = 'utf8mb4' AND c.collation_name = REGEXP_REPLACE(s.default_collation_name, '^utf8(mb3)?_', 'utf8mb4_')), '')) END AS table_options FROM information_schema.schemata s WHERE s.schema_name = DATABASE()) t;
  EXECUTE IMMEDIATE CONCAT('CREATE TABLE ITEM_WIDE__eavpivot_new ', COALESCE(table_options, ''), ' AS SELECT s.e0 AS `ITEM_ID` FROM (', src, ') s WHERE 1 = 0');
  SET staged = TRUE;
  EXECUTE IMMEDIATE CONCAT('ALTER TABLE ITEM_WIDE__eavpivot_new ', col_defs);
  START TRANSACTION;
  EXECUTE IMMEDIATE CONCAT('INSERT INTO ITEM_WIDE__eavpivot_new (`ITEM_ID`, ', col_names, ') SELECT s.e0, ', cases, ' FROM (', src, ') s GROUP BY s.e0');
  SET want = (SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
      FROM ITEM_DETAIL ID
      JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
      LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d);
  EXECUTE IMMEDIATE 'SELECT COUNT(*) INTO @eavpivot_got FROM ITEM_WIDE__eavpivot_new';
  SET got = @eavpivot_got;
  IF got - before_rows <> want THEN
    SET msg = LEFT(CONCAT('eavpivot: verification failed: ITEM_WIDE__eavpivot_new gained ', got - before_rows, ' rows, the source has ', want, ' distinct entities'), 500);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
  END IF;
  COMMIT;
  IF (SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND (table_name = CONVERT(X'4954454D5F57494445' USING utf8mb4) AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) = CAST(CONVERT(X'4954454D5F57494445' USING utf8mb4) AS BINARY)))) > 0 THEN
    RENAME TABLE ITEM_WIDE TO ITEM_WIDE__eavpivot_old, ITEM_WIDE__eavpivot_new TO ITEM_WIDE;
    DROP TABLE ITEM_WIDE__eavpivot_old;
  ELSE
    RENAME TABLE ITEM_WIDE__eavpivot_new TO ITEM_WIDE;
  END IF;
  SET staged = FALSE;
  SELECT CONCAT('eavpivot: ITEM_WIDE now holds ', got, ' rows with ', n_cols, ' attribute columns') AS eavpivot;
  DROP TEMPORARY TABLE IF EXISTS eavpivot_attrs;
END //
DELIMITER ;
