//! `eavpivot script JOB --dialect postgres`: one PL/pgSQL `DO` block a DBA can read and run
//! with `psql -v ON_ERROR_STOP=1 -f script.sql`, no eavpivot at hand.
//!
//! A `DO` block is one statement, so PostgreSQL runs it in one transaction: any error (a
//! refusal below, or a failing CREATE/INSERT) rolls everything back, DDL included. Attribute
//! names are discovered, matched and excluded as exact text (`CAST(a AS TEXT) COLLATE "C"`:
//! under a nondeterministic collation or `citext`, `=` would make `Color` and `color` one
//! attribute and drop one of their values), become columns only through `format('%I')` and
//! literals only through `format('%L')`; a text value's `MAX`/`MIN` orders by bytes, as `eavpivot
//! run` does. Before anything is written it refuses: no attributes, entity keys that are one key
//! only to a nondeterministic collation or `citext` (asked of the catalog first, as `run` asks),
//! more than 1,600 columns, a column name that is empty or longer than 63 bytes (PostgreSQL
//! would truncate it silently, and two long names could then collide), and two attributes (or
//! a key column) becoming the same identifier. Key column types come from the source itself
//! (`CREATE TABLE … AS SELECT … WHERE 1 = 0`), the columns are added, the pivot is inserted and
//! the row count verified against the distinct entities.

use super::query;
use super::script::ScriptPlan;
use crate::dialect::prelude::*;
use crate::dialect::TextEquality;
use crate::error::Result;
use crate::terms::{EmptyNames, IfExists, Order};

use super::script::{
    column_type_and_aggregate, key_probe, listed, one_line, order_text, raise_text,
    refuse_unsupported, rename_rows,
};
use super::Postgres;

/// The whole script for `plan`.
pub fn render(plan: &ScriptPlan) -> Result<String> {
    refuse_unsupported(plan, "PL/pgSQL")?;
    let d = &Postgres;
    let body = [
        declarations(d, plan),
        "BEGIN\n".to_string(),
        session_settings(d),
        discover(d, plan),
        guards(d, plan),
        build(d, plan),
        format!(
            "EXCEPTION WHEN OTHERS THEN\n  RAISE EXCEPTION 'eavpivot script for job % stopped and rolled back, nothing was written: %', {}, SQLERRM;\nEND\n",
            d.quote_literal(&plan.name)
        ),
    ]
    .concat();
    // A dollar-quote tag that the body (which holds the job's own SQL) cannot end early.
    let tag = (0..)
        .map(|i| match i {
            0 => "$eavpivot$".to_string(),
            i => format!("$eavpivot{i}$"),
        })
        .find(|t| !body.contains(t.as_str()))
        .unwrap_or_default();
    Ok(format!("{}DO {tag}\n{body}{tag};\n", header(plan)))
}

/// The output formats `eavpivot run` sets on its sessions ([`Postgres::session_setup`]), for
/// this block's transaction only: a database set to `extra_float_digits = 0` would write a
/// float8 value into its text column with 15 digits.
fn session_settings(d: &Postgres) -> String {
    super::postgres::SESSION_SETTINGS
        .iter()
        .map(|(name, value)| {
            format!(
                "  PERFORM set_config({}, {}, true);\n",
                d.quote_literal(name),
                d.quote_literal(value)
            )
        })
        .collect()
}

fn header(plan: &ScriptPlan) -> String {
    format!(
        "-- eavpivot script: job {}, {} -> {}, for PostgreSQL 9.4 or later (PL/pgSQL DO block).\n\
         -- Run it with: psql -v ON_ERROR_STOP=1 -f this_file.sql  (one statement, one transaction)\n\
         -- 1. Discovers the distinct attribute names on the server as exact text, so names differing\n\
         --    only in case or trailing spaces stay distinct, even under citext or a case-insensitive\n\
         --    collation; columns {}.\n\
         -- 2. Refuses, before writing anything, column names that are empty or longer than 63 bytes\n\
         --    (PostgreSQL would truncate them silently), names that are the same identifier, more\n\
         --    than 1600 columns, and entity keys that are one key only to such a collation.\n\
         -- 3. Creates the table (key types taken from the source), inserts MAX(CASE ...) built with\n\
         --    format('%I') and format('%L'), verifies the row count; any error rolls all of it back.\n",
        one_line(&plan.name),
        plan.source_table,
        plan.target,
        order_text(plan),
    )
}

fn declarations(d: &Postgres, plan: &ScriptPlan) -> String {
    format!(
        "DECLARE\n  \
         src CONSTANT text := {};\n  \
         attrs text[];\n  cols text[];\n  n_cols integer;\n  bad text;\n  \
         want bigint;\n  before bigint := 0;\n  got bigint;\n  dist text;\n  \
         may_collate bigint;\n  v_type text;\n  v_expr text := 's.v';\n",
        d.quote_literal(&query::source_rows(d, &plan.source))
    )
}

/// `attrs` (exact names) and `cols` (column names), in column order.
fn discover(d: &Postgres, plan: &ScriptPlan) -> String {
    let renames = rename_rows(plan, |from, to| {
        format!("({}, {})", d.quote_literal(from), d.quote_literal(to))
    });
    let rename_join = match renames.is_empty() {
        true => "LEFT JOIN (SELECT NULL::text, NULL::text) r(a, col) ON false".to_string(),
        false => format!(
            "LEFT JOIN (VALUES {}) r(a, col) ON r.a = n.a",
            renames.join(", ")
        ),
    };
    let names = match &plan.columns {
        Some(list) => {
            let rows: Vec<String> = listed(plan, list)
                .iter()
                .map(|(i, name)| format!("({i}, {})", d.quote_literal(name)))
                .collect();
            format!(
                "SELECT v.a, v.n AS ord FROM (VALUES {}) v(n, a)",
                rows.join(", ")
            )
        }
        None => {
            let exact = exact_attribute(d);
            let order = match plan.order {
                Order::Frequency => format!("COUNT(*) DESC, {exact}"),
                Order::Natural | Order::Alphabetical => exact.clone(),
            };
            let exclude: Vec<String> = plan.exclude.iter().map(|n| d.quote_literal(n)).collect();
            let not_excluded = match exclude.is_empty() {
                true => String::new(),
                false => format!(" AND {exact} NOT IN ({})", exclude.join(", ")),
            };
            format!(
                "SELECT {exact} AS a, ROW_NUMBER() OVER (ORDER BY {order}) AS ord\n    \
                 FROM ({}) s\n    WHERE s.a IS NOT NULL AND {exact} <> ''{not_excluded}\n    GROUP BY {exact}",
                indent(&query::source_rows(d, &plan.source), 4)
            )
        }
    };
    // Empty by bytes: a nondeterministic collation takes a name of only ignorable
    // characters (U+200B) for '', which run keeps as a name.
    let empty_check = match plan.empty_names {
        EmptyNames::Skip => String::new(),
        EmptyNames::Error => format!(
            "  IF EXISTS (SELECT 1 FROM ({}) s WHERE s.a IS NULL OR {} = '') THEN\n    \
             RAISE EXCEPTION 'eavpivot: some source rows have a NULL or empty attribute name (pivot.empty_names: error)';\n  END IF;\n",
            indent(&query::source_rows(d, &plan.source), 2),
            exact_attribute(d),
        ),
    };
    format!(
        "{empty_check}  SELECT array_agg(n.a ORDER BY n.ord), array_agg({} || COALESCE(r.col, n.a) || {} ORDER BY n.ord)\n    \
         INTO attrs, cols\n  FROM (\n    {names}\n  ) n\n  {rename_join};\n",
        d.quote_literal(&plan.prefix),
        d.quote_literal(&plan.suffix),
    )
}

/// Every refusal, before anything is written.
fn guards(d: &Postgres, plan: &ScriptPlan) -> String {
    let keys: Vec<String> = plan
        .entity
        .iter()
        .map(|e| d.quote_literal(&super::entity_column_name(d, e)))
        .collect();
    let max = d.max_columns().unwrap_or(1_600);
    let mut out = format!(
        "  n_cols := COALESCE(array_length(attrs, 1), 0);\n  \
         IF n_cols = 0 THEN\n    RAISE EXCEPTION 'eavpivot: no attributes to pivot in {source}';\n  END IF;\n  \
         IF n_cols + {n_keys} > {max} THEN\n    \
         RAISE EXCEPTION 'eavpivot: % attribute columns plus {n_keys} key column(s) exceed PostgreSQL''s limit of {max} columns per table; exclude attributes in the job, or split the target', n_cols;\n  END IF;\n  \
         SELECT c INTO bad FROM unnest(cols) c WHERE c = '' OR octet_length(c) > 63 LIMIT 1;\n  \
         IF bad IS NOT NULL THEN\n    \
         RAISE EXCEPTION 'eavpivot: column name % is empty or longer than 63 bytes, PostgreSQL''s identifier limit (it would be truncated silently); exclude or rename the attribute in the job', quote_literal(left(bad, 100));\n  END IF;\n  \
         SELECT c INTO bad FROM unnest(cols || ARRAY[{keys}]) c GROUP BY c HAVING COUNT(*) > 1 LIMIT 1;\n  \
         IF bad IS NOT NULL THEN\n    \
         RAISE EXCEPTION 'eavpivot: several attributes (or a key column) become the column %; rename or exclude them in the job', quote_ident(bad);\n  END IF;\n",
        source = raise_text(&plan.source_table.sql()),
        n_keys = plan.entity.len(),
        keys = keys.join(", "),
    );
    out.push_str(&key_twins(d, plan));
    if plan.if_exists == IfExists::Fail {
        out.push_str(&format!(
            "  IF to_regclass({}) IS NOT NULL THEN\n    \
             RAISE EXCEPTION 'eavpivot: target table {} already exists (target.if_exists: fail); drop it, or set if_exists to replace or append';\n  END IF;\n",
            d.quote_literal(&plan.target.sql()),
            raise_text(&plan.target.sql()),
        ));
    }
    out
}

/// Entity keys that differ in bytes but are one key to a nondeterministic collation or
/// `citext` would be grouped into one row: refused, as `eavpivot run` refuses them. The
/// catalog is asked first (as `run` asks it), so a database without either pays no scan;
/// `collisdeterministic` is PostgreSQL 12's, so older servers ask only about `citext`.
fn key_twins(d: &Postgres, plan: &ScriptPlan) -> String {
    let catalog = match d.text_equality() {
        TextEquality::BytesUnlessDeclared(sql) => sql,
        TextEquality::Bytes | TextEquality::Collation => return String::new(),
    };
    // As run checks only keys that may hold text (numeric 1.0 and 1.00 are one key, not
    // twins), a key whose type pg_typeof names as a non-text kind is left out at run time.
    let not_text: Vec<String> = [
        "smallint",
        "integer",
        "bigint",
        "numeric",
        "real",
        "double precision",
        "boolean",
        "date",
        "timestamp without time zone",
    ]
    .into_iter()
    .filter(|name| !super::portable::may_hold_text(Some(name)))
    .map(|name| d.quote_literal(name))
    .collect();
    let exact: Vec<Option<String>> = (0..plan.entity.len())
        .map(|i| {
            d.exact_text_key(&format!("s.e{i}")).map(|key| {
                format!(
                    "CASE WHEN pg_typeof(s.e{i})::text IN ({}) THEN NULL ELSE {key} END",
                    not_text.join(", ")
                )
            })
        })
        .collect();
    format!(
        "  IF current_setting('server_version_num')::int >= 120000 THEN\n    \
         EXECUTE {} INTO may_collate;\n  \
         ELSE\n    SELECT COUNT(*) INTO may_collate FROM pg_type WHERE typname = 'citext';\n  END IF;\n  \
         IF may_collate > 0 THEN\n    IF EXISTS ({}) THEN\n      RAISE EXCEPTION '{}';\n    END IF;\n  END IF;\n",
        d.quote_literal(catalog),
        indent(
            &query::keys_one_under_collation(d, &plan.source, &exact),
            6
        ),
        raise_text(super::script::KEYS_ONE_UNDER_COLLATION),
    )
}

/// A text value's `MAX`/`MIN` by its bytes, as `eavpivot run` orders it (`en_US` puts `a`
/// before `B`; `citext` has no order between `Red` and `red`); other types by their own order.
/// The type is the value expression's as written, known even when every value is NULL.
fn value_order() -> String {
    "  EXECUTE format('SELECT pg_typeof(s.v)::text FROM (%s) s LIMIT 1', src) INTO v_type;\n  \
     IF v_type = 'citext' OR v_type LIKE '%.citext' THEN\n    v_expr := 'CAST(s.v AS TEXT) COLLATE \"C\"';\n  \
     ELSIF v_type IN ('text', 'character varying', 'character') THEN\n    v_expr := 's.v COLLATE \"C\"';\n  END IF;\n"
        .to_string()
}

/// CREATE (types from the source), ADD COLUMN, INSERT … MAX(CASE …), verify.
fn build(d: &Postgres, plan: &ScriptPlan) -> String {
    let table = &plan.target;
    let (column_type, agg) = column_type_and_aggregate(d, plan);
    let keys: Vec<String> = plan
        .entity
        .iter()
        .map(|e| d.quote_ident(&super::entity_column_name(d, e)))
        .collect();
    let refs = super::entity_refs(&plan.source, "s");
    let create = format!(
        "  EXECUTE format('CREATE TABLE %s AS SELECT %s FROM (%s) s WHERE 1 = 0', {}, {}, src);\n  \
         EXECUTE format('ALTER TABLE %s %s', {0}, (SELECT string_agg(format('ADD COLUMN %I %s', c, {}), ', ' ORDER BY o) FROM unnest(cols) WITH ORDINALITY u(c, o)));\n",
        d.quote_literal(&table.sql()),
        d.quote_literal(&key_probe(d, plan)),
        d.quote_literal(&column_type),
    ) + &distribute(d, plan);
    let mut out = String::new();
    match plan.if_exists {
        IfExists::Append => out.push_str(&format!(
            "  IF to_regclass({}) IS NOT NULL THEN\n    EXECUTE format('SELECT COUNT(*) FROM %s', {0}) INTO before;\n  ELSE\n  {}  END IF;\n",
            d.quote_literal(&table.sql()),
            indent(&create, 2).trim_end_matches(' '),
        )),
        IfExists::Replace => out.push_str(&format!(
            "  IF to_regclass({}) IS NOT NULL THEN\n    EXECUTE format('DROP TABLE %s', {0});\n  END IF;\n{create}",
            d.quote_literal(&table.sql())
        )),
        // Merge is refused before any script is written.
        IfExists::Fail | IfExists::Merge => out.push_str(&create),
    }
    out.push_str(&value_order());
    out.push_str(&format!(
        "  EXECUTE format(E'INSERT INTO %s (%s, %s)\\nSELECT %s,\\n  %s\\nFROM (%s) s\\nGROUP BY %s', {table}, {keys}, \
         (SELECT string_agg(format('%I', c), ', ' ORDER BY o) FROM unnest(cols) WITH ORDINALITY u(c, o)), {refs}, \
         (SELECT string_agg(format('{agg}(CASE WHEN {exact} = %L THEN %s END) AS %I', a, v_expr, c), E',\\n  ' ORDER BY o) FROM unnest(attrs, cols) WITH ORDINALITY u(a, c, o)), \
         src, {refs});\n  \
         want := ({count});\n  \
         EXECUTE format('SELECT COUNT(*) FROM %s', {table}) INTO got;\n  \
         IF got - before <> want THEN\n    \
         RAISE EXCEPTION 'eavpivot: verification failed: the target gained % rows, the source has % distinct entities', got - before, want;\n  END IF;\n  \
         RAISE NOTICE 'eavpivot: {table_text} now holds % rows with % attribute columns', got, n_cols;\n",
        table = d.quote_literal(&table.sql()),
        exact = exact_attribute(d).replace('\'', "''"),
        keys = d.quote_literal(&keys.join(", ")),
        refs = d.quote_literal(&refs),
        count = query::count_entities(d, &plan.source).replace('\n', "\n    "),
        table_text = raise_text(&table.sql()),
    ));
    out
}

/// On Citus, with the source distributed by an entity column: the new table distributed by
/// that key and co-located with the source, right after its CREATE (`target.distribute: auto`).
fn distribute(d: &Postgres, plan: &ScriptPlan) -> String {
    use super::citus::{column_named, Citus, ScaleOut};
    if plan.distribute == crate::terms::Distribute::Off {
        return String::new();
    }
    let (source, table) = (&plan.source_table, &plan.target);
    let calls: Vec<String> = plan
        .entity
        .iter()
        .filter_map(|e| {
            let column = column_named(&e.expr)?;
            let key = super::entity_column_name(d, e);
            Some(format!(
                "    IF dist = {} THEN\n      EXECUTE {};\n    END IF;\n",
                d.quote_literal(&column),
                d.quote_literal(&Citus.distribute(table, &key, source))
            ))
        })
        .collect();
    if calls.is_empty() {
        return String::new();
    }
    // A static query: PL/pgSQL resolves its tables only when it runs, inside the IF.
    format!(
        "  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN\n    \
         SELECT x.c INTO dist FROM ({}) x(c, g);\n{}  END IF;\n",
        Citus.distribution(source),
        calls.concat()
    )
}

/// Indent every line after the first by `n` more spaces.
fn indent(sql: &str, n: usize) -> String {
    sql.replace('\n', &format!("\n{}", " ".repeat(n)))
}

/// The attribute as exact text: `Color` and `color` stay two attributes under a
/// nondeterministic collation or `citext` (the same key `eavpivot run` uses there).
fn exact_attribute(d: &Postgres) -> String {
    d.exact_text_key("s.a").unwrap_or_else(|| "s.a".into())
}
