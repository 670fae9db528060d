-- eavpivot script: job item_detail, ITEM_DETAIL -> ITEM_WIDE, for PostgreSQL 9.4 or later (PL/pgSQL DO block).
-- Run it with: psql -v ON_ERROR_STOP=1 -f this_file.sql  (one statement, one transaction)
-- 1. Discovers the distinct attribute names on the server as exact text, so names differing
--    only in case or trailing spaces stay distinct, even under citext or a case-insensitive
--    collation; columns in binary name order (eavpivot run orders naturally: 2 before 10).
-- 2. Refuses, before writing anything, column names that are empty or longer than 63 bytes
--    (PostgreSQL would truncate them silently), names that are the same identifier, more
--    than 1600 columns, and entity keys that are one key only to such a collation.
-- 3. Creates the table (key types taken from the source), inserts MAX(CASE ...) built with
--    format('%I') and format('%L'), verifies the row count; any error rolls all of it back.
DO $eavpivot$
DECLARE
  src CONSTANT text := 'SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
  FROM ITEM_DETAIL ID
  JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
  LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID';
  attrs text[];
  cols text[];
  n_cols integer;
  bad text;
  want bigint;
  before bigint := 0;
  got bigint;
  dist text;
  may_collate bigint;
  v_type text;
  v_expr text := 's.v';
BEGIN
  PERFORM set_config('extra_float_digits', '3', true);
  PERFORM set_config('DateStyle', 'ISO', true);
  PERFORM set_config('IntervalStyle', 'postgres', true);
  PERFORM set_config('bytea_output', 'hex', true);
  SELECT array_agg(n.a ORDER BY n.ord), array_agg('' || COALESCE(r.col, n.a) || '' ORDER BY n.ord)
    INTO attrs, cols
  FROM (
    SELECT (CAST(s.a AS TEXT) || '') COLLATE "C" AS a, ROW_NUMBER() OVER (ORDER BY (CAST(s.a AS TEXT) || '') COLLATE "C") AS ord
    FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
      FROM ITEM_DETAIL ID
      JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
      LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
    WHERE s.a IS NOT NULL AND (CAST(s.a AS TEXT) || '') COLLATE "C" <> ''
    GROUP BY (CAST(s.a AS TEXT) || '') COLLATE "C"
  ) n
  LEFT JOIN (SELECT NULL::text, NULL::text) r(a, col) ON false;
  n_cols := COALESCE(array_length(attrs, 1), 0);
  IF n_cols = 0 THEN
    RAISE EXCEPTION 'eavpivot: no attributes to pivot in ITEM_DETAIL';
  END IF;
  IF n_cols + 1 > 1600 THEN
    RAISE EXCEPTION 'eavpivot: % attribute columns plus 1 key column(s) exceed PostgreSQL''s limit of 1600 columns per table; exclude attributes in the job, or split the target', n_cols;
  END IF;
  SELECT c INTO bad FROM unnest(cols) c WHERE c = '' OR octet_length(c) > 63 LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'eavpivot: column name % is empty or longer than 63 bytes, PostgreSQL''s identifier limit (it would be truncated silently); exclude or rename the attribute in the job', quote_literal(left(bad, 100));
  END IF;
  SELECT c INTO bad FROM unnest(cols || ARRAY['item_id']) c GROUP BY c HAVING COUNT(*) > 1 LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'eavpivot: several attributes (or a key column) become the column %; rename or exclude them in the job', quote_ident(bad);
  END IF;
  IF current_setting('server_version_num')::int >= 120000 THEN
    EXECUTE 'SELECT (SELECT COUNT(*) FROM pg_collation WHERE NOT collisdeterministic) + (SELECT COUNT(*) FROM pg_type WHERE typname = ''citext'')' INTO may_collate;
  ELSE
    SELECT COUNT(*) INTO may_collate FROM pg_type WHERE typname = 'citext';
  END IF;
  IF may_collate > 0 THEN
    IF EXISTS (SELECT MIN(CASE WHEN pg_typeof(s.e0)::text IN ('smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision', 'boolean', 'date', 'timestamp without time zone') THEN NULL ELSE (CAST(s.e0 AS TEXT) || '') COLLATE "C" END), MAX(CASE WHEN pg_typeof(s.e0)::text IN ('smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision', 'boolean', 'date', 'timestamp without time zone') THEN NULL ELSE (CAST(s.e0 AS TEXT) || '') COLLATE "C" END)
      FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
        FROM ITEM_DETAIL ID
        JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
        LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s
      GROUP BY s.e0
      HAVING MIN(CASE WHEN pg_typeof(s.e0)::text IN ('smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision', 'boolean', 'date', 'timestamp without time zone') THEN NULL ELSE (CAST(s.e0 AS TEXT) || '') COLLATE "C" END) <> MAX(CASE WHEN pg_typeof(s.e0)::text IN ('smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision', 'boolean', 'date', 'timestamp without time zone') THEN NULL ELSE (CAST(s.e0 AS TEXT) || '') COLLATE "C" END)) THEN
      RAISE EXCEPTION 'eavpivot: the source has entity keys that differ in bytes but are one key to the collation (case, accents or trailing spaces), so grouping by entity would make one row of them; nothing was written: give each entity one spelling, or compare the key by a binary collation';
    END IF;
  END IF;
  IF to_regclass('ITEM_WIDE') IS NOT NULL THEN
    EXECUTE format('DROP TABLE %s', 'ITEM_WIDE');
  END IF;
  EXECUTE format('CREATE TABLE %s AS SELECT %s FROM (%s) s WHERE 1 = 0', 'ITEM_WIDE', 's.e0 AS "item_id"', src);
  EXECUTE format('ALTER TABLE %s %s', 'ITEM_WIDE', (SELECT string_agg(format('ADD COLUMN %I %s', c, 'text'), ', ' ORDER BY o) FROM unnest(cols) WITH ORDINALITY u(c, o)));
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    SELECT x.c INTO dist FROM (SELECT column_to_column_name(logicalrelid, partkey), colocationid FROM pg_dist_partition WHERE logicalrelid = to_regclass('ITEM_DETAIL') AND partmethod = 'h') x(c, g);
    IF dist = 'item_id' THEN
      EXECUTE 'SELECT create_distributed_table(''ITEM_WIDE'', ''item_id'', colocate_with => ''ITEM_DETAIL'')';
    END IF;
  END IF;
  EXECUTE format('SELECT pg_typeof(s.v)::text FROM (%s) s LIMIT 1', src) INTO v_type;
  IF v_type = 'citext' OR v_type LIKE '%.citext' THEN
    v_expr := 'CAST(s.v AS TEXT) COLLATE "C"';
  ELSIF v_type IN ('text', 'character varying', 'character') THEN
    v_expr := 's.v COLLATE "C"';
  END IF;
  EXECUTE format(E'INSERT INTO %s (%s, %s)\nSELECT %s,\n  %s\nFROM (%s) s\nGROUP BY %s', 'ITEM_WIDE', '"item_id"', (SELECT string_agg(format('%I', c), ', ' ORDER BY o) FROM unnest(cols) WITH ORDINALITY u(c, o)), 's.e0', (SELECT string_agg(format('MAX(CASE WHEN (CAST(s.a AS TEXT) || '''') COLLATE "C" = %L THEN %s END) AS %I', a, v_expr, c), E',\n  ' ORDER BY o) FROM unnest(attrs, cols) WITH ORDINALITY u(a, c, o)), src, 's.e0');
  want := (SELECT COUNT(*) FROM (SELECT DISTINCT s.e0 FROM (SELECT ID.ITEM_ID AS e0, AE.ELEMENT_DESC AS a, COALESCE(EL.LIST_DESC, ID.DETAIL_VALUE) AS v
      FROM ITEM_DETAIL ID
      JOIN ATTRIBUTE_ELEMENT AE ON ID.ELEMENT_ID = AE.ELEMENT_ID
      LEFT JOIN ELEMENT_LIST EL ON ID.ELEMENT_ID = EL.ELEMENT_ID AND ID.LIST_ID = EL.LIST_ID) s) d);
  EXECUTE format('SELECT COUNT(*) FROM %s', 'ITEM_WIDE') INTO got;
  IF got - before <> want THEN
    RAISE EXCEPTION 'eavpivot: verification failed: the target gained % rows, the source has % distinct entities', got - before, want;
  END IF;
  RAISE NOTICE 'eavpivot: ITEM_WIDE now holds % rows with % attribute columns', got, n_cols;
EXCEPTION WHEN OTHERS THEN
  RAISE EXCEPTION 'eavpivot script for job % stopped and rolled back, nothing was written: %', 'item_detail', SQLERRM;
END
$eavpivot$;
