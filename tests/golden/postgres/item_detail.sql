-- eavpivot dry run: job item_detail on postgres (golden test, no connection)
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
SELECT s.v FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT (SELECT COUNT(*) FROM pg_collation WHERE NOT collisdeterministic) + (SELECT COUNT(*) FROM pg_type WHERE typname = 'citext');

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(octet_length((s.v)::text)) AS min_bytes, MAX(octet_length((s.v)::text)) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0
FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.a;

-- read-only, ran during the dry run:
SELECT s.e0 FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0;

-- read-only, ran during the dry run:
SELECT CASE WHEN to_regclass('ITEM_WIDE') IS NULL THEN 0 ELSE 1 END;

-- read-only, ran during the dry run:
SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'citus';

-- read-only, ran during the dry run:
SELECT p.a, COUNT(*) AS pairs, SUM(CASE WHEN p.lo <> p.hi THEN 1 ELSE 0 END) AS conflicting
FROM (SELECT s.e0, s.a, MIN(s.v) AS lo, MAX(s.v) AS hi FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE s.v IS NOT NULL AND s.a IS NOT NULL AND s.a <> '' GROUP BY s.e0, s.a) p
GROUP BY p.a;

BEGIN;

SET jit = off;

-- read-only, ran during the dry run:
EXPLAIN (FORMAT JSON) SELECT CAST(s.e0 AS BIGINT) AS "item_id",
  CAST(MAX(CASE WHEN s.a = 'Color' THEN s.v END) AS text) COLLATE pg_catalog."default" AS "Color",
  CAST(MAX(CASE WHEN s.a = 'Material' THEN s.v END) AS text) COLLATE pg_catalog."default" AS "Material",
  CAST(MAX(CASE WHEN s.a = 'Size' THEN s.v END) AS text) COLLATE pg_catalog."default" AS "Size",
  CAST(MAX(CASE WHEN s.a = 'Voltage' THEN s.v END) AS text) COLLATE pg_catalog."default" AS "Voltage",
  CAST(MAX(CASE WHEN s.a = 'Warranty 2 years' THEN s.v END) AS text) COLLATE pg_catalog."default" AS "Warranty 2 years",
  CAST(MAX(CASE WHEN s.a = 'Warranty 10 years' THEN s.v END) AS text) COLLATE pg_catalog."default" AS "Warranty 10 years",
  CAST(MAX(CASE WHEN s.a = 'Weight (kg)' THEN s.v END) AS text) COLLATE pg_catalog."default" AS "Weight (kg)"
FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.e0;

CREATE TABLE ITEM_WIDE (
  "item_id" BIGINT NOT NULL,
  "Color" text,
  "Material" text,
  "Size" text,
  "Voltage" text,
  "Warranty 2 years" text,
  "Warranty 10 years" text,
  "Weight (kg)" text,
  PRIMARY KEY ("item_id")
);

INSERT INTO ITEM_WIDE ("item_id", "Color", "Material", "Size", "Voltage", "Warranty 2 years", "Warranty 10 years", "Weight (kg)")
SELECT s.e0,
  MAX(CASE WHEN s.a = 'Color' THEN s.v END) AS "Color",
  MAX(CASE WHEN s.a = 'Material' THEN s.v END) AS "Material",
  MAX(CASE WHEN s.a = 'Size' THEN s.v END) AS "Size",
  MAX(CASE WHEN s.a = 'Voltage' THEN s.v END) AS "Voltage",
  MAX(CASE WHEN s.a = 'Warranty 2 years' THEN s.v END) AS "Warranty 2 years",
  MAX(CASE WHEN s.a = 'Warranty 10 years' THEN s.v END) AS "Warranty 10 years",
  MAX(CASE WHEN s.a = 'Weight (kg)' THEN s.v END) AS "Weight (kg)"
FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.e0;

-- verify: distinct entities in the source
SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d;

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT("Color"), COUNT("Material"), COUNT("Size"), COUNT("Voltage"), COUNT("Warranty 2 years"), COUNT("Warranty 10 years"), COUNT("Weight (kg)") FROM ITEM_WIDE;

COMMIT;
