-- eavpivot dry run: job item_detail on mariadb (golden test, no connection)
-- auto: 16 source rows < 10000; one statement in the database is quickest
-- attribute -> column:
--   Color -> Color (ITEM_WIDE)
--   Material -> Material (ITEM_WIDE)
--   Size -> Size (ITEM_WIDE)
--   Voltage -> Voltage (ITEM_WIDE)
--   Warranty 2 years -> Warranty 2 years (ITEM_WIDE)
--   Warranty 10 years -> Warranty 10 years (ITEM_WIDE)
--   Weight (kg) -> Weight (kg) (ITEM_WIDE)

-- read-only, ran during the dry run:
SELECT s.v FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(OCTET_LENGTH(CONVERT(s.v USING utf8mb4))) AS min_bytes, MAX(OCTET_LENGTH(CONVERT(s.v USING utf8mb4))) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0
FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0 FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT GET_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'4954454D5F57494445' USING utf8mb4)))), 0), IS_USED_LOCK(CONCAT('eavpivot:', SHA1(CONCAT(DATABASE(), '.', CONVERT(X'4954454D5F57494445' USING utf8mb4)))));

-- read-only, ran during the dry run:
SELECT table_name, table_comment FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND table_name LIKE CONVERT(X'4954454D215F5749444525' USING utf8mb4) ESCAPE '!' AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) LIKE CAST(CONVERT(X'4954454D215F5749444525' USING utf8mb4) AS BINARY) ESCAPE '!');

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = DATABASE() AND (@@lower_case_table_names <> 0 OR CAST(table_schema AS BINARY) = CAST(DATABASE() AS BINARY))) AND (table_name = CONVERT(X'4954454D5F57494445' USING utf8mb4) AND (@@lower_case_table_names <> 0 OR CAST(table_name AS BINARY) = CAST(CONVERT(X'4954454D5F57494445' USING utf8mb4) AS BINARY)));

-- read-only, ran during the dry run:
SELECT CASE WHEN s.default_character_set_name <> 'utf8mb4' THEN CONCAT('DEFAULT CHARSET=utf8mb4', COALESCE((SELECT CONCAT(' COLLATE=', c.collation_name) FROM information_schema.collations c WHERE c.character_set_name = 'utf8mb4' AND c.collation_name = REGEXP_REPLACE(s.default_collation_name, '^utf8(mb3)?_', 'utf8mb4_')), '')) END AS table_options FROM information_schema.schemata s WHERE s.schema_name = DATABASE();

-- read-only, ran during the dry run:
SELECT p.a, COUNT(*) AS pairs, SUM(CASE WHEN p.lo <> p.hi THEN 1 ELSE 0 END) AS conflicting
FROM (SELECT s.e0, s.a, MIN(s.v) AS lo, MAX(s.v) AS hi FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE s.v IS NOT NULL AND s.a IS NOT NULL AND s.a <> CAST('' AS BINARY) GROUP BY s.e0, s.a) p
GROUP BY p.a;

CREATE TABLE ITEM_WIDE__eavpivot_RUNTAG (
  `ITEM_ID` BIGINT NOT NULL,
  `Color` LONGTEXT,
  `Material` LONGTEXT,
  `Size` LONGTEXT,
  `Voltage` LONGTEXT,
  `Warranty 2 years` LONGTEXT,
  `Warranty 10 years` LONGTEXT,
  `Weight (kg)` LONGTEXT,
  PRIMARY KEY (`ITEM_ID`)
) COMMENT = 'eavpivot job item_detail run RUNTAG';

START TRANSACTION;

INSERT INTO ITEM_WIDE__eavpivot_RUNTAG (`ITEM_ID`, `Color`, `Material`, `Size`, `Voltage`, `Warranty 2 years`, `Warranty 10 years`, `Weight (kg)`)
SELECT s.e0,
  MAX(CASE WHEN s.a = X'436F6C6F72' THEN s.v END) AS `Color`,
  MAX(CASE WHEN s.a = X'4D6174657269616C' THEN s.v END) AS `Material`,
  MAX(CASE WHEN s.a = X'53697A65' THEN s.v END) AS `Size`,
  MAX(CASE WHEN s.a = X'566F6C74616765' THEN s.v END) AS `Voltage`,
  MAX(CASE WHEN s.a = X'57617272616E74792032207965617273' THEN s.v END) AS `Warranty 2 years`,
  MAX(CASE WHEN s.a = X'57617272616E7479203130207965617273' THEN s.v END) AS `Warranty 10 years`,
  MAX(CASE WHEN s.a = X'57656967687420286B6729' THEN s.v END) AS `Weight (kg)`
FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.e0;

-- verify: distinct entities in the source
SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, CAST(CONVERT(AE.ELEMENT_DESC USING utf8mb4) AS BINARY) AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d;

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT(`Color`), COUNT(`Material`), COUNT(`Size`), COUNT(`Voltage`), COUNT(`Warranty 2 years`), COUNT(`Warranty 10 years`), COUNT(`Weight (kg)`) FROM ITEM_WIDE__eavpivot_RUNTAG;

COMMIT;

RENAME TABLE ITEM_WIDE__eavpivot_RUNTAG TO ITEM_WIDE;
