//! `eavpivot script JOB --dialect mariadb`: one compound statement (`BEGIN NOT ATOMIC … END`)
//! a DBA can read and run with the `mariadb` client, no eavpivot at hand.
//!
//! MariaDB commits every CREATE, ALTER and RENAME on its own, so one transaction cannot hold
//! the build. The script therefore does what `eavpivot run` does there: it builds and fills a
//! staging table (`<target>__eavpivot_new`), verifies it, and only then swaps it in with one
//! atomic `RENAME TABLE`; an exit handler drops the staging table on any error, so a failure
//! leaves the old target untouched. `append` to an existing table inserts in one transaction
//! instead, rolled back on error.
//!
//! Attribute names are discovered as bytes (the default collations ignore case and trailing
//! spaces; the dialect's attribute key keeps them apart), reach the dynamic SQL only as hex
//! literals built by `HEX()` on the server, and become columns only through backtick doubling
//! (`REPLACE(col, '`', '``')`). Column names are refused when empty, longer than 64 characters,
//! ending in a space, holding NUL or a character outside the BMP, or equal to another column
//! ignoring case (MariaDB's column names are case-insensitive). `group_concat_max_len` is raised
//! for the session and the column lists are checked for truncation.
//!
//! The session is set up as `eavpivot run`'s (UTF-8, `STRICT_ALL_TABLES`), and the staging
//! table is created in `utf8mb4` where the schema's default character set is another, so a
//! `latin1` schema holds `☃` instead of refusing it (or storing `?`).

use super::query;
use super::script::ScriptPlan;
use crate::dialect::prelude::*;
use crate::error::Result;
use crate::table_ref::TableRef;
use crate::terms::{EmptyNames, IfExists, Order};

use super::script::{
    column_type_and_aggregate, key_probe, listed, one_line, order_text, refuse_unsupported,
    rename_rows,
};
use super::MariaDb;

/// Where the script builds the table: the same staging name `eavpivot run` uses.
const STAGING_SUFFIX: &str = "__eavpivot_new";

/// The whole script for `plan`.
pub fn render(plan: &ScriptPlan) -> Result<String> {
    refuse_unsupported(plan, "MariaDB")?;
    let d = &MariaDb;
    Ok([
        header(plan),
        // The session as `eavpivot run` sets it up: UTF-8, and strict (a value a column cannot
        // hold fails the script instead of being stored as `?`). Strict refuses a variable set
        // over its maximum: 1 GiB is `group_concat_max_len`'s (4294967295 failed).
        format!("{};\n", d.session_setup().join(";\n")),
        "SET SESSION group_concat_max_len = 1073741824;\nDELIMITER //\nBEGIN NOT ATOMIC\n".into(),
        declarations(d, plan),
        discover(d, plan),
        guards(d, plan),
        value_order(),
        lists(d, plan),
        build(d, plan),
        "  DROP TEMPORARY TABLE IF EXISTS eavpivot_attrs;\nEND //\nDELIMITER ;\n".into(),
    ]
    .concat())
}

/// A string literal the DBA can read; the dialect's hex form only when a backslash would
/// depend on `sql_mode` (NO_BACKSLASH_ESCAPES).
fn lit(text: &str) -> String {
    match text.contains('\\') {
        true => MariaDb.quote_literal(text),
        false => format!("'{}'", text.replace('\'', "''")),
    }
}

/// `IF cond THEN` raise an error with `message` (a string expression) `END IF`.
fn fail_if(cond: &str, message: &str) -> String {
    format!(
        "  IF {cond} THEN\n    SET msg = LEFT({message}, 500);\n    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;\n  END IF;\n"
    )
}

fn header(plan: &ScriptPlan) -> String {
    format!(
        "-- eavpivot script: job {}, {} -> {}, for MariaDB 10.2 or later.\n\
         -- Run it with the mariadb client: mariadb DATABASE < this_file.sql (DELIMITER is a client command).\n\
         -- 1. Discovers the distinct attribute names on the server as bytes, so names differing only\n\
         --    in case or trailing spaces stay distinct; columns {}.\n\
         -- 2. Refuses, before writing anything, column names MariaDB cannot hold (empty, over 64\n\
         --    characters, a trailing space, NUL, beyond the BMP), names equal ignoring case, and\n\
         --    more than 1017 columns (InnoDB).\n\
         -- 3. DDL commits on its own in MariaDB: the table is built as {}, filled with\n\
         --    INSERT ... MAX(CASE ...) (names quoted by doubling backticks, values matched by HEX),\n\
         --    verified, then swapped in with one RENAME TABLE; on any error it is dropped and the\n\
         --    target is left as it was.\n",
        one_line(&plan.name),
        plan.source_table,
        plan.target,
        order_text(plan),
        plan.target.with_suffix(STAGING_SUFFIX),
    )
}

fn declarations(d: &MariaDb, plan: &ScriptPlan) -> String {
    let staging = plan.target.with_suffix(STAGING_SUFFIX);
    let append = plan.if_exists == IfExists::Append;
    let undo = match append {
        true => "rolled back, nothing was written",
        false => "its staging table was dropped, the target was not touched",
    };
    format!(
        "  DECLARE src {TEXT} DEFAULT {};\n  \
         DECLARE n_cols INT DEFAULT 0;\n  DECLARE bad {TEXT};\n  DECLARE msg VARCHAR(500) CHARACTER SET utf8mb4;\n  \
         DECLARE col_defs, col_names, cases {TEXT};\n  \
         DECLARE v_expr {TEXT} DEFAULT 's.v';\n  \
         DECLARE want, before_rows, got BIGINT DEFAULT 0;\n  \
         DECLARE staged BOOL DEFAULT FALSE;\n  \
         DECLARE table_options {TEXT};\n  \
         DECLARE EXIT HANDLER FOR SQLEXCEPTION\n  BEGIN\n    \
         GET DIAGNOSTICS CONDITION 1 msg = MESSAGE_TEXT;\n    ROLLBACK;\n    \
         DROP TEMPORARY TABLE IF EXISTS eavpivot_attrs;\n    {}\n    \
         SET msg = LEFT(CONCAT({}, msg), 500);\n    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;\n  END;\n",
        lit(&query::source_rows(d, &plan.source)),
        // Only a staging table this script created: never a table of that name it found.
        match append {
            true => String::new(),
            false => format!("IF staged THEN\n      DROP TABLE IF EXISTS {staging};\n    END IF;"),
        },
        lit(&format!(
            "eavpivot script for job {} stopped; {undo}: ",
            one_line(&plan.name)
        )),
    )
}

/// The type of the script's text variables: a variable declared without a character set takes
/// the schema's default, and a `latin1` schema's could not hold a column name such as `naïve ☃`
/// (the script stopped on "Incorrect string value", or named the column `naïve ?`).
const TEXT: &str = "LONGTEXT CHARACTER SET utf8mb4";

/// `eavpivot_attrs(ord, a, col)`: attribute bytes and column names, in column order.
fn discover(d: &MariaDb, plan: &ScriptPlan) -> String {
    let renames = rename_rows(plan, |from, to| {
        format!(
            "SELECT {} AS a, {} AS col",
            d.attribute_key_literal(from),
            lit(to)
        )
    });
    let (join, renamed) = match renames.is_empty() {
        true => (String::new(), "NULL"),
        false => (
            format!(
                "\n  LEFT JOIN ({}) r ON r.a = n.a",
                renames.join(" UNION ALL ")
            ),
            "r.col",
        ),
    };
    let names = match &plan.columns {
        Some(list) => {
            let rows: Vec<String> = listed(plan, list)
                .iter()
                .map(|(i, name)| {
                    format!("SELECT {i} AS ord, {} AS a", d.attribute_key_literal(name))
                })
                .collect();
            rows.join(" UNION ALL ")
        }
        None => {
            let order = match plan.order {
                Order::Frequency => "COUNT(*) DESC, s.a",
                Order::Natural | Order::Alphabetical => "s.a",
            };
            let mut skip = vec![d.attribute_key_literal("")];
            skip.extend(plan.exclude.iter().map(|n| d.attribute_key_literal(n)));
            format!(
                "SELECT ROW_NUMBER() OVER (ORDER BY {order}) AS ord, s.a\n    FROM ({}) s\n    WHERE s.a NOT IN ({})\n    GROUP BY s.a",
                query::source_rows(d, &plan.source).replace('\n', "\n    "),
                skip.join(", ")
            )
        }
    };
    let empty_check = match plan.empty_names {
        EmptyNames::Skip => String::new(),
        EmptyNames::Error => fail_if(
            &format!(
                "EXISTS (SELECT 1 FROM ({}) s WHERE s.a IS NULL OR s.a = {})",
                query::source_rows(d, &plan.source).replace('\n', "\n  "),
                d.attribute_key_literal("")
            ),
            &lit("eavpivot: some source rows have a NULL or empty attribute name (pivot.empty_names: error)"),
        ),
    };
    format!(
        "{empty_check}  DROP TEMPORARY TABLE IF EXISTS eavpivot_attrs;\n  \
         CREATE TEMPORARY TABLE eavpivot_attrs (ord INT NOT NULL, a LONGBLOB NOT NULL, col LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL);\n  \
         INSERT INTO eavpivot_attrs (ord, a, col)\n  \
         SELECT n.ord, n.a, CONCAT({}, COALESCE({renamed}, CONVERT(n.a USING utf8mb4)), {})\n  \
         FROM (\n    {names}\n  ) n{join};\n",
        lit(&plan.prefix),
        lit(&plan.suffix),
    )
}

/// Every refusal, before anything is written.
fn guards(d: &MariaDb, plan: &ScriptPlan) -> String {
    let keys: Vec<String> = plan
        .entity
        .iter()
        .map(|e| {
            format!(
                " UNION ALL SELECT CONVERT({} USING utf8mb4) COLLATE utf8mb4_bin",
                lit(&super::entity_column_name(d, e))
            )
        })
        .collect();
    let max = d.max_columns().unwrap_or(1_017);
    let n_keys = plan.entity.len();
    let mut out = format!(
        "  SET n_cols = (SELECT COUNT(*) FROM eavpivot_attrs);\n\
         {}{}  \
         SET bad = (SELECT col FROM eavpivot_attrs\n    \
         WHERE col = '' OR CHAR_LENGTH(col) > 64 OR col LIKE '% ' OR LOCATE(CONVERT(X'00' USING utf8mb4), col) > 0\n       \
         OR col <> CONVERT(CONVERT(col USING utf8mb3) USING utf8mb4)\n    ORDER BY ord LIMIT 1);\n\
         {}  \
         SET bad = (SELECT MIN(c) FROM (SELECT col AS c FROM eavpivot_attrs{}) k\n    \
         GROUP BY LOWER(c) HAVING COUNT(*) > 1 LIMIT 1);\n\
         {}",
        fail_if("n_cols = 0", &lit(&format!(
            "eavpivot: no attributes to pivot in {}",
            one_line(&plan.source_table.sql())
        ))),
        fail_if(&format!("n_cols + {n_keys} > {max}"), &format!("CONCAT('eavpivot: ', n_cols, ' attribute columns plus {n_keys} key column(s) exceed the InnoDB limit of {max} columns per table; exclude attributes in the job, or split the target')")),
        fail_if("bad IS NOT NULL", "CONCAT('eavpivot: column name ''', LEFT(bad, 100), ''' cannot be a MariaDB column: empty, longer than 64 characters, ending in a space, or holding NUL or a character outside the BMP; exclude or rename the attribute in the job')"),
        keys.concat(),
        fail_if("bad IS NOT NULL", "CONCAT('eavpivot: several attributes (or a key column) become the column ''', LEFT(bad, 100), ''', the same identifier to MariaDB (column names ignore case); rename or exclude them in the job')"),
    );
    // The key's type is not known here: every key column is compared by its bytes.
    out.push_str(&fail_if(
        &format!(
            "EXISTS ({})",
            query::keys_one_under_collation(d, &plan.source, &[])
        ),
        &lit(super::script::KEYS_ONE_UNDER_COLLATION),
    ));
    if plan.if_exists == IfExists::Fail {
        out.push_str(&fail_if(
            &format!("({}) > 0", d.table_exists(&plan.target)),
            &lit(&format!(
                "eavpivot: target table {} already exists (target.if_exists: fail); drop it, or set if_exists to replace or append",
                one_line(&plan.target.sql())
            )),
        ));
    }
    out
}

/// A text value's `MAX`/`MIN` by its bytes, as `eavpivot run` orders it: the default
/// collations order `a` before `B` and leave `Red` and `red` unordered, so the script kept
/// another value of a conflict than `run` (and not always the same one). `COLLATION()` of the
/// value says whether it is text (`binary` for numbers, dates and byte strings), without a
/// type name to read; an empty source keeps `s.v` (it has no attributes and is refused).
fn value_order() -> String {
    "  SET @eavpivot_value_collation = NULL;\n  \
     EXECUTE IMMEDIATE CONCAT('SELECT COLLATION(s.v) INTO @eavpivot_value_collation FROM (', src, ') s LIMIT 1');\n  \
     IF @eavpivot_value_collation <> 'binary' THEN\n    \
     SET v_expr = 'CONVERT(s.v USING utf8mb4) COLLATE utf8mb4_nopad_bin';\n  END IF;\n"
        .to_string()
}

/// `col_defs`, `col_names` and `cases`, each checked against `group_concat_max_len`.
fn lists(_d: &MariaDb, plan: &ScriptPlan) -> String {
    let (column_type, agg) = column_type_and_aggregate(&MariaDb, plan);
    let quoted = "CONCAT('`', REPLACE(col, '`', '``'), '`')";
    format!(
        "  SELECT\n    \
         GROUP_CONCAT(CONCAT('ADD COLUMN ', {quoted}, ' ', {}) ORDER BY ord SEPARATOR ', '),\n    \
         GROUP_CONCAT({quoted} ORDER BY ord SEPARATOR ', '),\n    \
         GROUP_CONCAT(CONCAT('{agg}(CASE WHEN s.a = X''', HEX(a), ''' THEN ', v_expr, ' END) AS ', {quoted}) ORDER BY ord SEPARATOR ', ')\n    \
         INTO col_defs, col_names, cases\n  FROM eavpivot_attrs;\n\
         {}",
        lit(&column_type),
        fail_if("GREATEST(LENGTH(col_defs), LENGTH(col_names), LENGTH(cases)) >= @@SESSION.group_concat_max_len", &lit("eavpivot: a column list reached group_concat_max_len and was cut; nothing was written")),
    )
}

/// Stage, fill, verify, swap (or append in one transaction).
fn build(d: &MariaDb, plan: &ScriptPlan) -> String {
    let target = &plan.target;
    let staging = target.with_suffix(STAGING_SUFFIX);
    let keys: Vec<String> = plan
        .entity
        .iter()
        .map(|e| d.quote_ident(&super::entity_column_name(d, e)))
        .collect();
    let refs = super::entity_refs(&plan.source, "s");
    let exists = format!("({}) > 0", d.table_exists(target));
    let fill = |table: &str| {
        format!(
            "  START TRANSACTION;\n  \
             EXECUTE IMMEDIATE CONCAT({}, col_names, {}, cases, ' FROM (', src, {});\n  \
             SET want = ({});\n  \
             EXECUTE IMMEDIATE {};\n  SET got = @eavpivot_got;\n\
             {}  COMMIT;\n",
            lit(&format!("INSERT INTO {table} ({}, ", keys.join(", "))),
            lit(&format!(") SELECT {refs}, ")),
            lit(&format!(") s GROUP BY {refs}")),
            query::count_entities(d, &plan.source).replace('\n', "\n    "),
            lit(&format!("SELECT COUNT(*) INTO @eavpivot_got FROM {table}")),
            fail_if("got - before_rows <> want", &format!(
                "CONCAT('eavpivot: verification failed: {} gained ', got - before_rows, ' rows, the source has ', want, ' distinct entities')",
                one_line(table).replace('\'', "''")
            )),
        )
    };
    let old = target.with_suffix("__eavpivot_old");
    // A table already named like the staging table or the replaced one is someone's: refuse
    // rather than drop it (and the exit handler drops only what `staged` says it created).
    let taken = |table: &TableRef| {
        fail_if(
            &format!("({}) > 0", d.table_exists(table)),
            &lit(&format!(
                "eavpivot: a table named {} already exists; this script never drops a table it did not create: drop or rename it",
                one_line(&table.sql())
            )),
        )
    };
    // The staging table's options by the query `eavpivot run` reads
    // ([`super::Schema::created_table_options`]): utf8mb4 where the schema's default is another
    // character set.
    let options = format!(
        "  SELECT t.table_options INTO table_options FROM ({}) t;\n",
        d.created_table_options(target).unwrap_or_default()
    );
    let stage = format!(
        "{}{}{options}  \
         EXECUTE IMMEDIATE CONCAT({}, COALESCE(table_options, ''), {}, src, {});\n  SET staged = TRUE;\n  \
         EXECUTE IMMEDIATE CONCAT({}, col_defs);\n{}  \
         IF {exists} THEN\n    \
         RENAME TABLE {target} TO {old}, {staging} TO {target};\n    DROP TABLE {old};\n  \
         ELSE\n    RENAME TABLE {staging} TO {target};\n  END IF;\n  SET staged = FALSE;\n",
        taken(&staging),
        taken(&old),
        lit(&format!("CREATE TABLE {staging} ")),
        lit(&format!(" AS SELECT {} FROM (", key_probe(d, plan))),
        lit(") s WHERE 1 = 0"),
        lit(&format!("ALTER TABLE {staging} ")),
        fill(&staging.sql()),
    );
    let done = format!(
        "  SELECT CONCAT({}, got, ' rows with ', n_cols, ' attribute columns') AS eavpivot;\n",
        lit(&format!("eavpivot: {} now holds ", one_line(&target.sql())))
    );
    match plan.if_exists {
        IfExists::Append => format!(
            "  IF {exists} THEN\n    SET before_rows = (SELECT COUNT(*) FROM {target});\n{}  ELSE\n{stage}  END IF;\n{done}",
            fill(&target.sql()).replace("\n  ", "\n    ").replacen("  ", "    ", 1),
        ),
        // Merge is refused before any script is written.
        IfExists::Replace | IfExists::Fail | IfExists::Merge => format!("{stage}{done}"),
    }
}
