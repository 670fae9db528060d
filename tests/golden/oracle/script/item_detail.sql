-- eavpivot script: job item_detail, ITEM_DETAIL -> ITEM_WIDE, for Oracle Database 12.2 or later.
-- Run it with SQL*Plus or SQLcl: sqlplus USER@DB @this_file.sql (the block ends at the line holding /).
-- 1. Discovers the distinct attribute names on the server, compared as text, so names differing
--    only in case or trailing spaces stay distinct; columns in binary name order (eavpivot run orders naturally: 2 before 10).
--    Oracle stores an empty string as NULL: empty values are NULL cells, empty names NULL names.
-- 2. Refuses, before writing anything, column names Oracle cannot hold (over 128 bytes, or
--    holding a double quote), a name used twice, and more than 1000 columns.
-- 3. DDL commits on its own in Oracle: the table is built as ITEM_WIDE__eavpivot_new, filled with
--    INSERT ... MAX(CASE ...), verified, then renamed into place (a replaced target is renamed
--    aside, then dropped); on any error the staging table is dropped and the target is left
--    as it was.
SET DEFINE OFF
SET SQLBLANKLINES ON
SET SERVEROUTPUT ON
DECLARE
  src CONSTANT CLOB := 'SELECT ID.ITEM_ID AS e0, ''|'' || AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID';
  col_type CONSTANT VARCHAR2(200) := 'CLOB';
  TYPE names_t IS TABLE OF VARCHAR2(32767);
  TYPE seen_t IS TABLE OF PLS_INTEGER INDEX BY VARCHAR2(32767);
  attrs names_t;
  seen seen_t;
  col VARCHAR2(32767);
  col_defs CLOB;
  col_names CLOB;
  cases CLOB;
  want NUMBER := 0;
  got NUMBER := 0;
  before_rows NUMBER := 0;
  n NUMBER;
  staged BOOLEAN := FALSE;
  moved BOOLEAN := FALSE;
  PROCEDURE fail(msg VARCHAR2) IS
  BEGIN
    RAISE_APPLICATION_ERROR(-20001, SUBSTR(msg, 1, 2000));
  END;
BEGIN
  EXECUTE IMMEDIATE 'SELECT s.a FROM (' || src || ') s WHERE s.a NOT IN (''|'') GROUP BY s.a ORDER BY NLSSORT(s.a, ''NLS_SORT = BINARY'')'
    BULK COLLECT INTO attrs;
  IF attrs.COUNT = 0 THEN
    fail('eavpivot: no attributes to pivot in ITEM_DETAIL');
  END IF;
  IF attrs.COUNT + 1 > 1000 THEN
    fail('eavpivot: ' || attrs.COUNT || ' attribute columns plus 1 key column(s) exceed Oracle''s limit of 1000 columns per table; exclude attributes in the job, or split the target');
  END IF;
  seen('ITEM_ID') := 1;
  FOR i IN 1 .. attrs.COUNT LOOP
    col := SUBSTR(attrs(i), 2);
    IF LENGTHB(col) > 128 OR INSTR(col, '"') > 0 THEN
      fail('eavpivot: column name ''' || SUBSTR(col, 1, 100) || ''' cannot be an Oracle column: longer than 128 bytes, or holding a double quote; exclude or rename the attribute in the job');
    END IF;
    IF seen.EXISTS(col) THEN
      fail('eavpivot: several attributes (or a key column) become the column ''' || SUBSTR(col, 1, 100) || '''; rename or exclude them in the job');
    END IF;
    seen(col) := 1;
    col_defs := col_defs || CASE WHEN i > 1 THEN ', ' END || '"' || col || '" ' || col_type;
    col_names := col_names || ', "' || col || '"';
    cases := cases || ', MAX(CASE WHEN s.a = ''' || REPLACE(attrs(i), '''', '''''') || ''' THEN s.v END)';
  END LOOP;
  EXECUTE IMMEDIATE 'SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT(''USERENV'', ''CURRENT_SCHEMA'') AND table_name = ''ITEM_WIDE__EAVPIVOT_NEW''' INTO n;
  IF n > 0 THEN
    fail('eavpivot: a table named ITEM_WIDE__eavpivot_new already exists; this script never drops a table it did not create: drop or rename it');
  END IF;
  EXECUTE IMMEDIATE 'SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT(''USERENV'', ''CURRENT_SCHEMA'') AND table_name = ''ITEM_WIDE__EAVPIVOT_OLD''' INTO n;
  IF n > 0 THEN
    fail('eavpivot: a table named ITEM_WIDE__eavpivot_old already exists; this script never drops a table it did not create: drop or rename it');
  END IF;
  EXECUTE IMMEDIATE 'CREATE TABLE ITEM_WIDE__eavpivot_new AS SELECT s.e0 AS "ITEM_ID" FROM (' || src || ') s WHERE 1 = 0';
  staged := TRUE;
  EXECUTE IMMEDIATE 'ALTER TABLE ITEM_WIDE__eavpivot_new ADD (' || col_defs || ')';
  EXECUTE IMMEDIATE 'INSERT INTO ITEM_WIDE__eavpivot_new ("ITEM_ID"' || col_names || ') SELECT s.e0' || cases || ' FROM (' || src || ') s GROUP BY s.e0';
  EXECUTE IMMEDIATE 'SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, ''|'' || AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d' INTO want;
  EXECUTE IMMEDIATE 'SELECT COUNT(*) FROM ITEM_WIDE__eavpivot_new' INTO got;
  IF got - before_rows <> want THEN
    fail('eavpivot: verification failed: ITEM_WIDE__eavpivot_new gained ' || (got - before_rows) || ' rows, the source has ' || want || ' distinct entities');
  END IF;
  COMMIT;
  EXECUTE IMMEDIATE 'SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT(''USERENV'', ''CURRENT_SCHEMA'') AND table_name = ''ITEM_WIDE''' INTO n;
  IF n > 0 THEN
    EXECUTE IMMEDIATE 'ALTER TABLE ITEM_WIDE RENAME TO ITEM_WIDE__eavpivot_old';
    moved := TRUE;
  END IF;
  EXECUTE IMMEDIATE 'ALTER TABLE ITEM_WIDE__eavpivot_new RENAME TO ITEM_WIDE';
  staged := FALSE;
  IF moved THEN
    moved := FALSE;
    EXECUTE IMMEDIATE 'DROP TABLE ITEM_WIDE__eavpivot_old';
  END IF;
  DBMS_OUTPUT.PUT_LINE('eavpivot: ITEM_WIDE now holds ' || got || ' rows with ' || attrs.COUNT || ' attribute columns');
EXCEPTION
  WHEN OTHERS THEN
    ROLLBACK;
    IF moved THEN
      EXECUTE IMMEDIATE 'ALTER TABLE ITEM_WIDE__eavpivot_old RENAME TO ITEM_WIDE';
    END IF;
    IF staged THEN
      EXECUTE IMMEDIATE 'DROP TABLE ITEM_WIDE__eavpivot_new';
    END IF;
    RAISE_APPLICATION_ERROR(-20000, SUBSTR('eavpivot script for job item_detail stopped; its staging table was dropped, the target was left as it was: ' || SQLERRM, 1, 2000));
END;
/
