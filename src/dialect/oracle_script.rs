//! `eavpivot script JOB --dialect oracle`: one PL/SQL anonymous block a DBA can read and run
//! with SQL*Plus or SQLcl, no eavpivot at hand.
//!
//! Oracle commits every CREATE, ALTER, RENAME and DROP on its own, so, as `eavpivot run` does
//! there, the block builds and fills a staging table (`<target>__eavpivot_new`), verifies it,
//! and only then renames it into place (a replaced target is renamed aside first, then
//! dropped: Oracle cannot swap two names at once). Its exception handler drops the staging
//! table and puts a target it renamed aside back, so a failure leaves the old target as it
//! was. `append` to an existing table inserts in one transaction instead, rolled back on error.
//!
//! Attribute names are discovered on the server as `'|' || name` (the dialect's attribute
//! key: '' is NULL to Oracle, and the mark keeps an empty name comparable), reach the dynamic
//! SQL only as literals with `'` doubled, and become columns only inside `"…"`. Column names
//! are refused when longer than 128 bytes, holding a double quote (which no Oracle name can
//! hold), or equal to another column (quoted names are case-sensitive, so only an exact
//! repeat collides), and the job is refused above Oracle's 1,000 columns per table.

use super::script::ScriptPlan;
use crate::error::Result;
use crate::table_ref::TableRef;
use crate::terms::{EmptyNames, IfExists, Order};

use super::prelude::*;
use super::script::{
    column_type_and_aggregate, key_probe, listed, one_line, order_text, refuse_unsupported,
    rename_rows,
};
use super::{query, Oracle};

/// Where the script builds the table: the same staging name the MariaDB script uses.
const STAGING_SUFFIX: &str = "__eavpivot_new";
/// Where a replaced target waits while the new one takes its name.
const REPLACED_SUFFIX: &str = "__eavpivot_old";

/// The whole script for `plan`.
pub fn render(plan: &ScriptPlan) -> Result<String> {
    refuse_unsupported(plan, "Oracle PL/SQL")?;
    let d = &Oracle;
    Ok([
        header(plan),
        // `&` would be a substitution variable and a blank line would end the block.
        "SET DEFINE OFF\nSET SQLBLANKLINES ON\nSET SERVEROUTPUT ON\nDECLARE\n".into(),
        declarations(d, plan),
        "BEGIN\n".into(),
        discover(d, plan),
        columns(d, plan),
        build(d, plan),
        handler(plan),
        "END;\n/\n".into(),
    ]
    .concat())
}

fn lit(text: &str) -> String {
    Oracle.quote_literal(text)
}

/// `IF cond THEN` raise an application error with `message` (a string expression) `END IF`.
fn fail_if(cond: &str, message: &str) -> String {
    format!("  IF {cond} THEN\n    fail({message});\n  END IF;\n")
}

fn header(plan: &ScriptPlan) -> String {
    format!(
        "-- eavpivot script: job {}, {} -> {}, for Oracle Database 12.2 or later.\n\
         -- Run it with SQL*Plus or SQLcl: sqlplus USER@DB @this_file.sql (the block ends at the line holding /).\n\
         -- 1. Discovers the distinct attribute names on the server, compared as text, so names differing\n\
         --    only in case or trailing spaces stay distinct; columns {}.\n\
         --    Oracle stores an empty string as NULL: empty values are NULL cells, empty names NULL names.\n\
         -- 2. Refuses, before writing anything, column names Oracle cannot hold (over 128 bytes, or\n\
         --    holding a double quote), a name used twice, and more than 1000 columns.\n\
         -- 3. DDL commits on its own in Oracle: the table is built as {}, filled with\n\
         --    INSERT ... MAX(CASE ...), verified, then renamed into place (a replaced target is renamed\n\
         --    aside, then dropped); on any error the staging table is dropped and the target is left\n\
         --    as it was.\n",
        one_line(&plan.name),
        plan.source_table,
        plan.target,
        order_text(plan),
        plan.target.with_suffix(STAGING_SUFFIX),
    )
}

fn declarations(d: &Oracle, plan: &ScriptPlan) -> String {
    let (column_type, _) = column_type_and_aggregate(d, plan);
    format!(
        "  src CONSTANT CLOB := {};\n  \
         col_type CONSTANT VARCHAR2(200) := {};\n  \
         TYPE names_t IS TABLE OF VARCHAR2(32767);\n  \
         TYPE seen_t IS TABLE OF PLS_INTEGER INDEX BY VARCHAR2(32767);\n  \
         attrs names_t;\n  seen seen_t;\n  col VARCHAR2(32767);\n  \
         col_defs CLOB;\n  col_names CLOB;\n  cases CLOB;\n  \
         want NUMBER := 0;\n  got NUMBER := 0;\n  before_rows NUMBER := 0;\n  n NUMBER;\n  \
         staged BOOLEAN := FALSE;\n  moved BOOLEAN := FALSE;\n  \
         PROCEDURE fail(msg VARCHAR2) IS\n  BEGIN\n    \
         RAISE_APPLICATION_ERROR(-20001, SUBSTR(msg, 1, 2000));\n  END;\n",
        lit(&query::source_rows(d, &plan.source)),
        lit(&column_type),
    )
}

/// `attrs`: the attribute keys (`'|' || name`), in column order.
fn discover(d: &Oracle, plan: &ScriptPlan) -> String {
    let empty_check = match plan.empty_names {
        EmptyNames::Skip => String::new(),
        EmptyNames::Error => format!(
            "  EXECUTE IMMEDIATE 'SELECT COUNT(*) FROM (' || src || ') s WHERE s.a = ' || {} INTO n;\n{}",
            lit(&d.attribute_key_literal("")),
            fail_if(
                "n > 0",
                &lit("eavpivot: some source rows have a NULL or empty attribute name (pivot.empty_names: error)"),
            )
        ),
    };
    let names = match &plan.columns {
        Some(list) => {
            let keys: Vec<String> = listed(plan, list)
                .iter()
                .map(|(_, name)| d.attribute_key_literal(name))
                .collect();
            format!("  attrs := names_t({});\n", keys.join(", "))
        }
        None => {
            let order = match plan.order {
                Order::Frequency => "COUNT(*) DESC, NLSSORT(s.a, 'NLS_SORT = BINARY')",
                Order::Natural | Order::Alphabetical => "NLSSORT(s.a, 'NLS_SORT = BINARY')",
            };
            let mut skip = vec![d.attribute_key_literal("")];
            skip.extend(plan.exclude.iter().map(|n| d.attribute_key_literal(n)));
            format!(
                "  EXECUTE IMMEDIATE 'SELECT s.a FROM (' || src || {}\n    BULK COLLECT INTO attrs;\n",
                lit(&format!(
                    ") s WHERE s.a NOT IN ({}) GROUP BY s.a ORDER BY {order}",
                    skip.join(", ")
                ))
            )
        }
    };
    format!(
        "{empty_check}{names}{}",
        fail_if(
            "attrs.COUNT = 0",
            &lit(&format!(
                "eavpivot: no attributes to pivot in {}",
                one_line(&plan.source_table.sql())
            ))
        )
    )
}

/// `col_defs`, `col_names` and `cases`, every name checked on the way.
fn columns(d: &Oracle, plan: &ScriptPlan) -> String {
    let (_, agg) = column_type_and_aggregate(d, plan);
    let keys: String = plan
        .entity
        .iter()
        .map(|e| format!("  seen({}) := 1;\n", lit(&super::entity_column_name(d, e))))
        .collect();
    let renames = rename_rows(plan, |from, to| {
        format!("WHEN {} THEN {}", d.attribute_key_literal(from), lit(to))
    });
    let name = match renames.is_empty() {
        true => "SUBSTR(attrs(i), 2)".to_string(),
        false => format!(
            "CASE attrs(i) {} ELSE SUBSTR(attrs(i), 2) END",
            renames.join(" ")
        ),
    };
    let max = d.max_columns().unwrap_or(1_000);
    let n_keys = plan.entity.len();
    let too_many = fail_if(
        &format!("attrs.COUNT + {n_keys} > {max}"),
        &format!("'eavpivot: ' || attrs.COUNT || ' attribute columns plus {n_keys} key column(s) exceed Oracle''s limit of {max} columns per table; exclude attributes in the job, or split the target'"),
    );
    let bad = fail_if(
        "LENGTHB(col) > 128 OR INSTR(col, '\"') > 0",
        "'eavpivot: column name ''' || SUBSTR(col, 1, 100) || ''' cannot be an Oracle column: longer than 128 bytes, or holding a double quote; exclude or rename the attribute in the job'",
    );
    let twice = fail_if(
        "seen.EXISTS(col)",
        "'eavpivot: several attributes (or a key column) become the column ''' || SUBSTR(col, 1, 100) || '''; rename or exclude them in the job'",
    );
    format!(
        "{too_many}{keys}  FOR i IN 1 .. attrs.COUNT LOOP\n    \
         col := {};\n\
         {}{}    seen(col) := 1;\n    \
         col_defs := col_defs || CASE WHEN i > 1 THEN ', ' END || '\"' || col || '\" ' || col_type;\n    \
         col_names := col_names || ', \"' || col || '\"';\n    \
         cases := cases || ', {agg}(CASE WHEN s.a = ''' || REPLACE(attrs(i), '''', '''''') || ''' THEN s.v END)';\n  \
         END LOOP;\n",
        affixed(&name, &plan.prefix, &plan.suffix),
        indent(&bad),
        indent(&twice),
    )
}

/// `prefix || name || suffix`, leaving out an empty affix (a literal `''` is NULL to Oracle).
fn affixed(name: &str, prefix: &str, suffix: &str) -> String {
    [lit(prefix), name.to_string(), lit(suffix)]
        .into_iter()
        .filter(|part| part != "''")
        .collect::<Vec<_>>()
        .join(" || ")
}

/// `text` two spaces further in: a check inside the loop.
fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// Stage, fill, verify, rename into place (or append in one transaction).
fn build(d: &Oracle, plan: &ScriptPlan) -> String {
    let target = &plan.target;
    let staging = target.with_suffix(STAGING_SUFFIX);
    let old = target.with_suffix(REPLACED_SUFFIX);
    let keys: Vec<String> = plan
        .entity
        .iter()
        .map(|e| d.quote_ident(&super::entity_column_name(d, e)))
        .collect();
    let refs = super::entity_refs(&plan.source, "s");
    let exists =
        |t: &TableRef| format!("  EXECUTE IMMEDIATE {} INTO n;\n", lit(&d.table_exists(t)));
    let fill = |table: &TableRef| {
        format!(
            "  EXECUTE IMMEDIATE {} || col_names || {} || cases || ' FROM (' || src || {};\n  \
             EXECUTE IMMEDIATE {} INTO want;\n  \
             EXECUTE IMMEDIATE {} INTO got;\n{}  COMMIT;\n",
            lit(&format!("INSERT INTO {table} ({}", keys.join(", "))),
            lit(&format!(") SELECT {refs}")),
            lit(&format!(") s GROUP BY {refs}")),
            lit(&query::count_entities(d, &plan.source)),
            lit(&format!("SELECT COUNT(*) FROM {table}")),
            fail_if(
                "got - before_rows <> want",
                &format!(
                    "'eavpivot: verification failed: {} gained ' || (got - before_rows) || ' rows, the source has ' || want || ' distinct entities'",
                    one_line(&table.sql()).replace('\'', "''")
                )
            ),
        )
    };
    // A table already named like the staging table or the replaced one is someone's: refuse
    // rather than drop it (the handler drops only what `staged` says this block created).
    let taken = |t: &TableRef| {
        format!(
            "{}{}",
            exists(t),
            fail_if(
                "n > 0",
                &lit(&format!(
                    "eavpivot: a table named {} already exists; this script never drops a table it did not create: drop or rename it",
                    one_line(&t.sql())
                ))
            )
        )
    };
    let stage = format!(
        "{}{}  EXECUTE IMMEDIATE {} || src || {};\n  staged := TRUE;\n  \
         EXECUTE IMMEDIATE {} || col_defs || ')';\n{}{}  IF n > 0 THEN\n    \
         EXECUTE IMMEDIATE {};\n    moved := TRUE;\n  END IF;\n  \
         EXECUTE IMMEDIATE {};\n  staged := FALSE;\n  \
         IF moved THEN\n    moved := FALSE;\n    EXECUTE IMMEDIATE {};\n  END IF;\n",
        taken(&staging),
        taken(&old),
        lit(&format!(
            "CREATE TABLE {staging} AS SELECT {} FROM (",
            key_probe(d, plan)
        )),
        lit(") s WHERE 1 = 0"),
        lit(&format!("ALTER TABLE {staging} ADD (")),
        fill(&staging),
        exists(target),
        lit(&d.rename_table(target, &old)),
        lit(&d.rename_table(&staging, target)),
        lit(&d.drop_table(&old)),
    );
    let done = format!(
        "  DBMS_OUTPUT.PUT_LINE({} || got || ' rows with ' || attrs.COUNT || ' attribute columns');\n",
        lit(&format!("eavpivot: {} now holds ", one_line(&target.sql())))
    );
    let refuse_existing = match plan.if_exists {
        IfExists::Fail => format!(
            "{}{}",
            exists(target),
            fail_if(
                "n > 0",
                &lit(&format!(
                    "eavpivot: target table {} already exists (target.if_exists: fail); drop it, or set if_exists to replace or append",
                    one_line(&target.sql())
                ))
            )
        ),
        _ => String::new(),
    };
    match plan.if_exists {
        IfExists::Append => format!(
            "{}  IF n > 0 THEN\n    EXECUTE IMMEDIATE {} INTO before_rows;\n{}  ELSE\n{}  END IF;\n{done}",
            exists(target),
            lit(&format!("SELECT COUNT(*) FROM {target}")),
            fill(target).replace("\n  ", "\n    ").replacen("  ", "    ", 1),
            stage.replace("\n  ", "\n    ").replacen("  ", "    ", 1),
        ),
        // Merge is refused before any script is written.
        IfExists::Replace | IfExists::Fail | IfExists::Merge => {
            format!("{refuse_existing}{stage}{done}")
        }
    }
}

/// On any error: undo what this block did, then say what happened.
fn handler(plan: &ScriptPlan) -> String {
    let target = &plan.target;
    let staging = target.with_suffix(STAGING_SUFFIX);
    let old = target.with_suffix(REPLACED_SUFFIX);
    let undo = match plan.if_exists {
        IfExists::Append => "rolled back, or its staging table dropped; the target was not touched",
        _ => "its staging table was dropped, the target was left as it was",
    };
    format!(
        "EXCEPTION\n  WHEN OTHERS THEN\n    ROLLBACK;\n    \
         IF moved THEN\n      EXECUTE IMMEDIATE {};\n    END IF;\n    \
         IF staged THEN\n      EXECUTE IMMEDIATE {};\n    END IF;\n    \
         RAISE_APPLICATION_ERROR(-20000, SUBSTR({} || SQLERRM, 1, 2000));\n",
        lit(&Oracle.rename_table(&old, target)),
        lit(&Oracle.drop_table(&staging)),
        lit(&format!(
            "eavpivot script for job {} stopped; {undo}: ",
            one_line(&plan.name)
        )),
    )
}
