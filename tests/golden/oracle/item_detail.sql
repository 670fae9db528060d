-- eavpivot dry run: job item_detail on oracle (golden test, no connection)
-- auto: 16 source rows < 10000; one statement in the database is quickest
-- note: oracle: an empty string is NULL in Oracle, so empty values are NULL cells (not counted as values) and empty attribute names are treated as NULL names (pivot.empty_names); no value read from Oracle is an empty string
-- note: oracle: DDL commits on its own and two tables cannot swap names at once: a replaced target is renamed aside before the new table takes its name, so a reader may find no table for that moment
-- attribute -> column:
--   Color -> Color (ITEM_WIDE)
--   Material -> Material (ITEM_WIDE)
--   Size -> Size (ITEM_WIDE)
--   Voltage -> Voltage (ITEM_WIDE)
--   Warranty 2 years -> Warranty 2 years (ITEM_WIDE)
--   Warranty 10 years -> Warranty 10 years (ITEM_WIDE)
--   Weight (kg) -> Weight (kg) (ITEM_WIDE)

-- read-only, ran during the dry run:
SELECT s.v FROM (SELECT ID.ITEM_ID AS e0, '|' || AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(LENGTHB(s.v)) AS min_bytes, MAX(LENGTHB(s.v)) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0
FROM (SELECT ID.ITEM_ID AS e0, '|' || AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0 FROM (SELECT ID.ITEM_ID AS e0, '|' || AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT CASE WHEN DBMS_LOCK.REQUEST(ORA_HASH('eavpivot:' || SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') || '.' || 'ITEM_WIDE', 1073741823), 6, 0) IN (0, 4) THEN 1 ELSE 0 END, NULL FROM dual;

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND table_name = 'ITEM_WIDE';

-- read-only, ran during the dry run:
SELECT p.a, COUNT(*) AS pairs, SUM(CASE WHEN p.lo <> p.hi THEN 1 ELSE 0 END) AS conflicting
FROM (SELECT s.e0, s.a, MIN(s.v) AS lo, MAX(s.v) AS hi FROM (SELECT ID.ITEM_ID AS e0, '|' || AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE s.v IS NOT NULL AND s.a IS NOT NULL AND s.a <> '|' GROUP BY s.e0, s.a) p
GROUP BY p.a;

CREATE TABLE ITEM_WIDE__eavpivot_RUNTAG (
  "ITEM_ID" NUMBER(19) NOT NULL,
  "Color" CLOB,
  "Material" CLOB,
  "Size" CLOB,
  "Voltage" CLOB,
  "Warranty 2 years" CLOB,
  "Warranty 10 years" CLOB,
  "Weight (kg)" CLOB,
  PRIMARY KEY ("ITEM_ID")
);

SET TRANSACTION READ WRITE;

INSERT INTO ITEM_WIDE__eavpivot_RUNTAG ("ITEM_ID", "Color", "Material", "Size", "Voltage", "Warranty 2 years", "Warranty 10 years", "Weight (kg)")
SELECT s.e0,
  MAX(CASE WHEN s.a = '|Color' THEN s.v END) AS "Color",
  MAX(CASE WHEN s.a = '|Material' THEN s.v END) AS "Material",
  MAX(CASE WHEN s.a = '|Size' THEN s.v END) AS "Size",
  MAX(CASE WHEN s.a = '|Voltage' THEN s.v END) AS "Voltage",
  MAX(CASE WHEN s.a = '|Warranty 2 years' THEN s.v END) AS "Warranty 2 years",
  MAX(CASE WHEN s.a = '|Warranty 10 years' THEN s.v END) AS "Warranty 10 years",
  MAX(CASE WHEN s.a = '|Weight (kg)' THEN s.v END) AS "Weight (kg)"
FROM (SELECT ID.ITEM_ID AS e0, '|' || AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.e0;

-- verify: distinct entities in the source
SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, '|' || AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d;

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT("Color"), COUNT("Material"), COUNT("Size"), COUNT("Voltage"), COUNT("Warranty 2 years"), COUNT("Warranty 10 years"), COUNT("Weight (kg)") FROM ITEM_WIDE__eavpivot_RUNTAG;

COMMIT;

ALTER TABLE ITEM_WIDE__eavpivot_RUNTAG RENAME TO ITEM_WIDE;
