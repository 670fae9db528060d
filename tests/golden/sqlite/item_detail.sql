-- eavpivot dry run: job item_detail on sqlite (golden test, no connection)
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
SELECT s.v FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC COLLATE BINARY AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT s.a, LENGTH(CAST(s.v AS BLOB)) AS b, CASE WHEN s.e0 IS NULL THEN 1 ELSE 0 END AS null_e0
FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC COLLATE BINARY AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s;

-- read-only, ran during the dry run:
SELECT s.e0 FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC COLLATE BINARY AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM sqlite_master WHERE sql LIKE '%collate%';

-- read-only, ran during the dry run:
SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'ITEM_WIDE' COLLATE NOCASE;

-- read-only, ran during the dry run:
SELECT p.a, COUNT(*) AS pairs, SUM(CASE WHEN p.lo <> p.hi THEN 1 ELSE 0 END) AS conflicting
FROM (SELECT s.e0, s.a, MIN(s.v) AS lo, MAX(s.v) AS hi FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC COLLATE BINARY AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE s.v IS NOT NULL AND s.a IS NOT NULL AND s.a <> '' GROUP BY s.e0, s.a) p
GROUP BY p.a;

BEGIN;

CREATE TABLE ITEM_WIDE (
  "ITEM_ID" INT NOT NULL,
  "Color" TEXT,
  "Material" TEXT,
  "Size" TEXT,
  "Voltage" TEXT,
  "Warranty 2 years" TEXT,
  "Warranty 10 years" TEXT,
  "Weight (kg)" TEXT,
  PRIMARY KEY ("ITEM_ID")
);

INSERT INTO ITEM_WIDE ("ITEM_ID", "Color", "Material", "Size", "Voltage", "Warranty 2 years", "Warranty 10 years", "Weight (kg)")
SELECT s.e0,
  CASE WHEN typeof(MAX(CASE WHEN s.a = 'Color' THEN s.v END)) = 'real' THEN eavpivot_real_text(MAX(CASE WHEN s.a = 'Color' THEN s.v END)) ELSE MAX(CASE WHEN s.a = 'Color' THEN s.v END) END AS "Color",
  CASE WHEN typeof(MAX(CASE WHEN s.a = 'Material' THEN s.v END)) = 'real' THEN eavpivot_real_text(MAX(CASE WHEN s.a = 'Material' THEN s.v END)) ELSE MAX(CASE WHEN s.a = 'Material' THEN s.v END) END AS "Material",
  CASE WHEN typeof(MAX(CASE WHEN s.a = 'Size' THEN s.v END)) = 'real' THEN eavpivot_real_text(MAX(CASE WHEN s.a = 'Size' THEN s.v END)) ELSE MAX(CASE WHEN s.a = 'Size' THEN s.v END) END AS "Size",
  CASE WHEN typeof(MAX(CASE WHEN s.a = 'Voltage' THEN s.v END)) = 'real' THEN eavpivot_real_text(MAX(CASE WHEN s.a = 'Voltage' THEN s.v END)) ELSE MAX(CASE WHEN s.a = 'Voltage' THEN s.v END) END AS "Voltage",
  CASE WHEN typeof(MAX(CASE WHEN s.a = 'Warranty 2 years' THEN s.v END)) = 'real' THEN eavpivot_real_text(MAX(CASE WHEN s.a = 'Warranty 2 years' THEN s.v END)) ELSE MAX(CASE WHEN s.a = 'Warranty 2 years' THEN s.v END) END AS "Warranty 2 years",
  CASE WHEN typeof(MAX(CASE WHEN s.a = 'Warranty 10 years' THEN s.v END)) = 'real' THEN eavpivot_real_text(MAX(CASE WHEN s.a = 'Warranty 10 years' THEN s.v END)) ELSE MAX(CASE WHEN s.a = 'Warranty 10 years' THEN s.v END) END AS "Warranty 10 years",
  CASE WHEN typeof(MAX(CASE WHEN s.a = 'Weight (kg)' THEN s.v END)) = 'real' THEN eavpivot_real_text(MAX(CASE WHEN s.a = 'Weight (kg)' THEN s.v END)) ELSE MAX(CASE WHEN s.a = 'Weight (kg)' THEN s.v END) END AS "Weight (kg)"
FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC COLLATE BINARY AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.e0;

-- verify: distinct entities in the source
SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC COLLATE BINARY AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d;

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT("Color"), COUNT("Material"), COUNT("Size"), COUNT("Voltage"), COUNT("Warranty 2 years"), COUNT("Warranty 10 years"), COUNT("Weight (kg)") FROM ITEM_WIDE;

COMMIT;
