-- eavpivot script: job item_detail, ITEM_DETAIL -> ITEM_WIDE, for SQL Server 2012 or later, or Babelfish.
-- Run it as one batch (sqlcmd -i, or SSMS): it contains no GO.
-- 1. Discovers the distinct attribute names on the server, compared as binary text with a
--    sentinel so names differing only in case or trailing spaces stay distinct; columns in binary name order (eavpivot run orders naturally: 2 before 10).
-- 2. Refuses, before writing anything, names past 128 characters (SQL Server's identifier
--    limit), names that collide as SQL Server identifiers, and more than 1024 columns.
-- 3. Creates the target by SELECT ... INTO WHERE 1 = 0 (the keys keep the source's types)
--    and fills it by INSERT ... MAX(CASE ...), names in brackets with ] doubled, run with
--    sp_executesql in one transaction (XACT_ABORT ON, TRY/CATCH rolls back); verifies the
--    row count, and commits.
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @attrs TABLE (ord INT IDENTITY(1, 1) PRIMARY KEY, a NVARCHAR(MAX) NOT NULL, col NVARCHAR(MAX) NULL);
DECLARE @cols NVARCHAR(MAX), @names NVARCHAR(MAX), @cases NVARCHAR(MAX), @create NVARCHAR(MAX), @insert NVARCHAR(MAX);
DECLARE @value_type NVARCHAR(128), @value NVARCHAR(MAX) = N's0.v';
DECLARE @bad NVARCHAR(200), @n_cols INT, @want BIGINT, @before BIGINT = 0, @got BIGINT, @ord INT;
BEGIN TRY
  INSERT INTO @attrs (a)
  SELECT s.a
  FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
  WHERE s.a IS NOT NULL AND s.a <> N'|'
  GROUP BY s.a
  ORDER BY s.a;
  UPDATE t SET col = N'' + COALESCE(NULL, LEFT(t.a, LEN(t.a + N'x') - 2)) + N''
  FROM @attrs t;
  SET @n_cols = (SELECT COUNT(*) FROM @attrs);
  IF @n_cols = 0
    RAISERROR(N'eavpivot: no attributes to pivot in ITEM_DETAIL', 16, 1);
  IF @n_cols + 1 > 1024
    RAISERROR(N'eavpivot: %d attribute columns plus 1 key column(s) exceed SQL Server''s limit of 1024 columns per table; exclude attributes in the job, or split the target', 16, 1, @n_cols);
  SET @bad = (SELECT TOP (1) LEFT(col, 100) FROM @attrs WHERE LEN(col + N'x') - 1 > 128 OR col = N'' ORDER BY ord);
  IF @bad IS NOT NULL
    RAISERROR(N'eavpivot: column name ''%s...'' is empty or longer than 128 characters, SQL Server''s identifier limit; exclude or rename the attribute in the job', 16, 1, @bad);
  SET @bad = (SELECT TOP (1) LEFT(c, 100) FROM (SELECT col COLLATE DATABASE_DEFAULT AS c FROM @attrs UNION ALL SELECT N'ITEM_ID') names GROUP BY c HAVING COUNT(*) > 1);
  IF @bad IS NOT NULL
    RAISERROR(N'eavpivot: several attributes (or a key column) become the column ''%s'', the same identifier to SQL Server (case and trailing spaces ignored); rename or exclude them in the job', 16, 1, @bad);
  IF EXISTS (SELECT MIN((CAST(s.e0 AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2), MAX((CAST(s.e0 AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2)
FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
GROUP BY s.e0
HAVING MIN((CAST(s.e0 AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2) <> MAX((CAST(s.e0 AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2))
    RAISERROR(N'eavpivot: the source has entity keys that differ in bytes but are one key to the collation (case, accents or trailing spaces), so grouping by entity would make one row of them; nothing was written: give each entity one spelling, or compare the key by a binary collation', 16, 1);
  SET @ord = (SELECT MIN(ord) FROM @attrs);
  WHILE @ord IS NOT NULL
  BEGIN
    SELECT
      @cols = COALESCE(@cols + N',' + NCHAR(10) + N'  ', N'') + N'CAST(NULL AS NVARCHAR(MAX)) AS ' + (N'[' + REPLACE(col, N']', N']]') + N']'),
      @names = COALESCE(@names + N',' + NCHAR(10) + N'  ', N'') + (N'[' + REPLACE(col, N']', N']]') + N']'),
      @cases = COALESCE(@cases + N',' + NCHAR(10) + N'  ', N'') + N'MAX(CASE WHEN s.a = N''' + REPLACE(a, N'''', N'''''') + N''' THEN s.v END) AS ' + (N'[' + REPLACE(col, N']', N']]') + N']')
    FROM @attrs WHERE ord = @ord;
    SET @ord = (SELECT MIN(ord) FROM @attrs WHERE ord > @ord);
  END;
  IF @cols IS NULL OR @names IS NULL OR @cases IS NULL
    RAISERROR(N'eavpivot: a column list came out NULL; nothing was run', 16, 1);
  SET @create = CAST(N'' AS NVARCHAR(MAX)) + N'SELECT s.e0 AS [ITEM_ID],' + NCHAR(10) + N'  ' + @cols + NCHAR(10) + N'INTO ITEM_WIDE' + NCHAR(10) + N'FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s CROSS JOIN (SELECT 1 AS one) j' + NCHAR(10) + N'WHERE 1 = 0';
  BEGIN TRANSACTION;
  IF OBJECT_ID(N'ITEM_WIDE', N'U') IS NOT NULL
    DROP TABLE ITEM_WIDE;
  EXEC sp_executesql @create;
  IF OBJECT_ID(N'ITEM_WIDE__eavpivot_v') IS NOT NULL
    RAISERROR(N'eavpivot: a table named ITEM_WIDE__eavpivot_v already exists; this script never drops a table it did not create: drop or rename it', 16, 1);
  EXEC sp_executesql N'SELECT TOP (0) s.v AS v INTO ITEM_WIDE__eavpivot_v FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s';
  SET @value_type = (SELECT t.name FROM sys.columns c JOIN sys.types t ON t.user_type_id = c.system_type_id WHERE c.object_id = OBJECT_ID(N'ITEM_WIDE__eavpivot_v'));
  EXEC sp_executesql N'DROP TABLE ITEM_WIDE__eavpivot_v';
  IF @value_type IN (N'nvarchar', N'nchar')
    SET @value = N's0.v COLLATE Latin1_General_100_BIN2';
  ELSE IF @value_type IN (N'varchar', N'char')
    SET @value = N'CAST(s0.v AS NVARCHAR(MAX)) COLLATE Latin1_General_100_BIN2';
  IF @value_type IN (N'money', N'smallmoney')
    SET @value = N'CAST(s0.v AS DECIMAL(19,4))';
  IF @value_type IN (N'float', N'real')
    RAISERROR(N'eavpivot: the source''s values are %s and SQL Server converts a FLOAT or REAL to text with 6 significant digits (1.23457e+006): convert them in the job''s value: (e.g. CONVERT(NVARCHAR(40), v, 3) for a FLOAT, 121 for a DATETIME) and write the script again, or use eavpivot run', 16, 1, @value_type);
  IF @value_type IN (N'datetime', N'smalldatetime')
    RAISERROR(N'eavpivot: the source''s values are %s and SQL Server converts a DATETIME to text without its seconds (Jan  2 2020  3:04AM): convert them in the job''s value: (e.g. CONVERT(NVARCHAR(40), v, 3) for a FLOAT, 121 for a DATETIME) and write the script again, or use eavpivot run', 16, 1, @value_type);
  IF @value_type IN (N'binary', N'varbinary')
    RAISERROR(N'eavpivot: the source''s values are %s and SQL Server converts a BINARY or VARBINARY to NVARCHAR by reading its bytes as UTF-16 (0x4142 becomes N''䉁''): convert them in the job''s value: (e.g. CONVERT(NVARCHAR(40), v, 3) for a FLOAT, 121 for a DATETIME) and write the script again, or use eavpivot run', 16, 1, @value_type);
  SET @insert = CAST(N'' AS NVARCHAR(MAX)) + N'INSERT INTO ITEM_WIDE ([ITEM_ID], ' + @names + N')' + NCHAR(10) + N'SELECT s.e0,' + NCHAR(10) + N'  ' + @cases + NCHAR(10) + N'FROM (SELECT s0.e0, s0.a, ' + @value + N' AS v FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N''|'') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s0) s' + NCHAR(10) + N'GROUP BY s.e0';
  EXEC sp_executesql @insert;
  SET @want = (SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, (CAST(AE.ELEMENT_DESC AS NVARCHAR(MAX)) + N'|') COLLATE Latin1_General_100_BIN2 AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d);
  EXEC sp_executesql N'SELECT @n = COUNT_BIG(*) FROM ITEM_WIDE', N'@n BIGINT OUTPUT', @n = @got OUTPUT;
  IF @got - @before <> @want
    RAISERROR(N'eavpivot: verification failed: the target gained %I64d rows, the source has %I64d distinct entities', 16, 1, @got, @want);
  COMMIT TRANSACTION;
  PRINT CONCAT(N'eavpivot: ITEM_WIDE now holds ', @got, N' rows with ', @n_cols, N' attribute columns');
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;
  DECLARE @error_number INT = ERROR_NUMBER(), @error_line INT = ERROR_LINE(), @error_message NVARCHAR(2048) = ERROR_MESSAGE();
  RAISERROR(N'eavpivot script for job %s stopped and rolled back, nothing was written. Error %d at line %d: %s', 16, 1, N'item_detail', @error_number, @error_line, @error_message);
END CATCH;
