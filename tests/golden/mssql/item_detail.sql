-- eavpivot dry run: job item_detail on mssql (golden test, no connection)
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
EXEC sp_describe_first_result_set @tsql = N'SELECT s.v FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0';

-- read-only, ran during the dry run:
SELECT s.a, COUNT(*) AS n_rows, COUNT(s.v) AS n_values, MIN(DATALENGTH(CAST(s.v AS NVARCHAR(MAX)))) AS min_bytes, MAX(DATALENGTH(CAST(s.v AS NVARCHAR(MAX)))) AS max_bytes, COUNT(*) - COUNT(s.e0) AS null_e0
FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.a;

-- read-only, ran during the dry run:
EXEC sp_describe_first_result_set @tsql = N'SELECT s.e0 FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE 1 = 0';

-- read-only, ran during the dry run:
SELECT CASE WHEN OBJECT_ID(N'ITEM_WIDE', N'U') IS NULL THEN 0 ELSE 1 END;

-- read-only, ran during the dry run:
SELECT p.a, COUNT(*) AS pairs, SUM(CASE WHEN p.lo <> p.hi THEN 1 ELSE 0 END) AS conflicting
FROM (SELECT s.e0, s.a, MIN(s.v) AS lo, MAX(s.v) AS hi FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s WHERE s.v IS NOT NULL AND s.a IS NOT NULL AND s.a <> N'|' GROUP BY s.e0, s.a) p
GROUP BY p.a;

SET XACT_ABORT ON; SET NOCOUNT OFF; BEGIN TRANSACTION;

CREATE TABLE ITEM_WIDE (
  [ITEM_ID] BIGINT NOT NULL,
  [Color] NVARCHAR(MAX),
  [Material] NVARCHAR(MAX),
  [Size] NVARCHAR(MAX),
  [Voltage] NVARCHAR(MAX),
  [Warranty 2 years] NVARCHAR(MAX),
  [Warranty 10 years] NVARCHAR(MAX),
  [Weight (kg)] NVARCHAR(MAX),
  PRIMARY KEY ([ITEM_ID])
);

INSERT INTO ITEM_WIDE ([ITEM_ID], [Color], [Material], [Size], [Voltage], [Warranty 2 years], [Warranty 10 years], [Weight (kg)])
SELECT s.e0,
  MAX(CASE WHEN s.a = N'Color|' THEN s.v END) AS [Color],
  MAX(CASE WHEN s.a = N'Material|' THEN s.v END) AS [Material],
  MAX(CASE WHEN s.a = N'Size|' THEN s.v END) AS [Size],
  MAX(CASE WHEN s.a = N'Voltage|' THEN s.v END) AS [Voltage],
  MAX(CASE WHEN s.a = N'Warranty 2 years|' THEN s.v END) AS [Warranty 2 years],
  MAX(CASE WHEN s.a = N'Warranty 10 years|' THEN s.v END) AS [Warranty 10 years],
  MAX(CASE WHEN s.a = N'Weight (kg)|' THEN s.v END) AS [Weight (kg)]
FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.e0;

-- verify: distinct entities in the source
SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d;

-- verify: rows and non-null cells written (must match the source)
SELECT COUNT(*), COUNT([Color]), COUNT([Material]), COUNT([Size]), COUNT([Voltage]), COUNT([Warranty 2 years]), COUNT([Warranty 10 years]), COUNT([Weight (kg)]) FROM ITEM_WIDE;

COMMIT TRANSACTION;
