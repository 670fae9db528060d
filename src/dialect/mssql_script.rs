//! `eavpivot script JOB --dialect mssql`: one self-contained T-SQL script a DBA can run in
//! SSMS or sqlcmd with no eavpivot at hand.
//!
//! It replaces the classic cursor-and-string-concatenation script with the same job done safely:
//! attribute names are discovered on the server, compared under a binary collation with a
//! sentinel (so `Color`, `color` and `Color ` stay apart), become columns only through
//! brackets with `]` doubled ([`BRACKETED`], what `QUOTENAME` does, which Babelfish gets wrong;
//! names past 128 characters are refused, as SQL Server's limit) and literals only through
//! `REPLACE(…, '''', '''''')`; the `SELECT … INTO` that creates the target and the `INSERT … MAX(CASE …)` run with `sp_executesql`
//! in one transaction with `XACT_ABORT` and a TRY/CATCH that rolls back. Every check raises an
//! error before anything is left half-built. No `GO`: the script is one batch.
//!
//! Everything eavpivot itself puts in the script (table names, expressions, plan settings)
//! reaches it through [`MsSql`]'s quoting, or verbatim as the operator's own SQL (the source
//! expressions, exactly as a run would send them).

use super::query;
use super::script::ScriptPlan;
use crate::dialect::prelude::*;
use crate::error::Result;
use crate::table_ref::TableRef;
use crate::terms::{EmptyNames, IfExists, Order};

use super::mssql::{MsSql, MAX_COLUMNS_PER_TABLE};
use super::script::{key_probe, raise_text};

/// `col` as a bracketed identifier, `]` doubled: what SQL Server's `QUOTENAME(col)` returns
/// (up to 128 characters, which the script checks first). Babelfish's `QUOTENAME` also doubles
/// `'`, so `it's` became the column `it''s` there.
const BRACKETED: &str = "(N'[' + REPLACE(col, N']', N']]') + N']')";

/// Which server-side string aggregation builds the column lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    /// A `WHILE` loop over the attributes in column order, one concatenation per attribute:
    /// SQL Server 2008 and later, and Babelfish (which has neither `STRING_AGG … WITHIN
    /// GROUP` before 4.3 nor `FOR XML PATH('')` with `.value()`).
    Ordered,
    /// `FOR XML PATH('')` with `.value()` (SQL Server 2008 and later).
    ForXmlPath,
}

/// The whole script for `plan`.
pub fn render(plan: &ScriptPlan, aggregation: Aggregation) -> Result<String> {
    super::script::refuse_unsupported(plan, "T-SQL")?;
    let d = &MsSql;
    let mut out = String::new();
    out.push_str(&header(plan, aggregation));
    out.push_str("SET NOCOUNT ON;\nSET XACT_ABORT ON;\n");
    out.push_str(
        "DECLARE @attrs TABLE (ord INT IDENTITY(1, 1) PRIMARY KEY, a NVARCHAR(MAX) NOT NULL, col NVARCHAR(MAX) NULL);\n\
         DECLARE @cols NVARCHAR(MAX), @names NVARCHAR(MAX), @cases NVARCHAR(MAX), @create NVARCHAR(MAX), @insert NVARCHAR(MAX);\n\
         DECLARE @value_type NVARCHAR(128), @value NVARCHAR(MAX) = N's0.v';\n\
         DECLARE @bad NVARCHAR(200), @n_cols INT, @want BIGINT, @before BIGINT = 0, @got BIGINT, @ord INT;\n",
    );
    out.push_str("BEGIN TRY\n");
    out.push_str(&discover(d, plan));
    out.push_str(&name_columns(d, plan));
    out.push_str(&guards(d, plan));
    out.push_str(&aggregate_lists(d, plan, aggregation));
    out.push_str(&build_statements(d, plan));
    out.push_str(&run_in_transaction(d, plan));
    out.push_str("END TRY\nBEGIN CATCH\n");
    out.push_str(&format!(
        "  IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;\n  \
         DECLARE @error_number INT = ERROR_NUMBER(), @error_line INT = ERROR_LINE(), @error_message NVARCHAR(2048) = ERROR_MESSAGE();\n  \
         RAISERROR(N'eavpivot script for job %s stopped and rolled back, nothing was written. Error %d at line %d: %s', 16, 1, {}, @error_number, @error_line, @error_message);\n",
        d.quote_literal(&plan.name)
    ));
    out.push_str("END CATCH;\n");
    Ok(out)
}

fn header(plan: &ScriptPlan, aggregation: Aggregation) -> String {
    let server = match aggregation {
        Aggregation::Ordered => "SQL Server 2012 or later, or Babelfish",
        Aggregation::ForXmlPath => "SQL Server 2012 or later (FOR XML PATH)",
    };
    let order = super::script::order_text(plan);
    format!(
        "-- eavpivot script: job {job_name}, {source} -> {target}, for {server}.\n\
         -- Run it as one batch (sqlcmd -i, or SSMS): it contains no GO.\n\
         -- 1. Discovers the distinct attribute names on the server, compared as binary text with a\n\
         --    sentinel so names differing only in case or trailing spaces stay distinct; columns {order}.\n\
         -- 2. Refuses, before writing anything, names past 128 characters (SQL Server's identifier\n\
         --    limit), names that collide as SQL Server identifiers, and more than {max} columns.\n\
         -- 3. Creates the target by SELECT ... INTO WHERE 1 = 0 (the keys keep the source's types)\n\
         --    and fills it by INSERT ... MAX(CASE ...), names in brackets with ] doubled, run with\n\
         --    sp_executesql in one transaction (XACT_ABORT ON, TRY/CATCH rolls back); verifies the\n\
         --    row count, and commits.\n",
        job_name = super::script::one_line(&plan.name),
        source = plan.source_table,
        target = plan.target,
        max = MAX_COLUMNS_PER_TABLE,
    )
}

/// `@attrs` filled with the attribute keys (name + sentinel), in column order.
fn discover(d: &MsSql, plan: &ScriptPlan) -> String {
    let exclude: Vec<String> = plan
        .exclude
        .iter()
        .map(|name| d.attribute_key_literal(name))
        .collect();
    let not_excluded = if exclude.is_empty() {
        String::new()
    } else {
        format!(" AND s.a NOT IN ({})", exclude.join(", "))
    };
    match &plan.columns {
        Some(names) => {
            let rows: Vec<String> = super::script::listed(plan, names)
                .iter()
                .map(|(i, name)| format!("({i}, {})", d.attribute_key_literal(name)))
                .collect();
            format!(
                "  INSERT INTO @attrs (a)\n  SELECT v.a FROM (VALUES {}) v(n, a) ORDER BY v.n;\n",
                rows.join(", ")
            )
        }
        None => {
            let order = match plan.order {
                Order::Frequency => "COUNT(*) DESC, s.a",
                Order::Natural | Order::Alphabetical => "s.a",
            };
            let empty = d.attribute_key_literal("");
            let empty_check = match plan.empty_names {
                EmptyNames::Skip => String::new(),
                EmptyNames::Error => format!(
                    "  IF EXISTS (SELECT 1 FROM ({}) s WHERE s.a IS NULL OR s.a = {empty})\n    \
                     RAISERROR(N'eavpivot: some source rows have a NULL or empty attribute name (pivot.empty_names: error)', 16, 1);\n",
                    query::source_rows(d, &plan.source)
                ),
            };
            format!(
                "{empty_check}  INSERT INTO @attrs (a)\n  SELECT s.a\n  FROM ({}) s\n  WHERE s.a IS NOT NULL AND s.a <> {empty}{not_excluded}\n  GROUP BY s.a\n  ORDER BY {order};\n",
                query::source_rows(d, &plan.source)
            )
        }
    }
}

/// `col`: prefix + (rename or the name without its sentinel) + suffix.
fn name_columns(d: &MsSql, plan: &ScriptPlan) -> String {
    let renames = super::script::rename_rows(plan, |from, to| {
        format!(
            "({}, {})",
            d.attribute_key_literal(from),
            d.quote_literal(to)
        )
    });
    let (join, renamed) = if renames.is_empty() {
        (String::new(), "NULL")
    } else {
        (
            format!(
                " LEFT JOIN (VALUES {}) r(a, col) ON r.a = t.a COLLATE Latin1_General_100_BIN2",
                renames.join(", ")
            ),
            "r.col",
        )
    };
    format!(
        "  UPDATE t SET col = {} + COALESCE({renamed}, LEFT(t.a, LEN(t.a + N'x') - 2)) + {}\n  FROM @attrs t{join};\n",
        d.quote_literal(&plan.prefix),
        d.quote_literal(&plan.suffix),
    )
}

/// Every refusal, before the transaction begins.
fn guards(d: &MsSql, plan: &ScriptPlan) -> String {
    let entity_names: Vec<String> = plan
        .entity
        .iter()
        .map(|e| {
            format!(
                "SELECT {}",
                d.quote_literal(&super::entity_column_name(d, e))
            )
        })
        .collect();
    format!(
        "  SET @n_cols = (SELECT COUNT(*) FROM @attrs);\n  \
         IF @n_cols = 0\n    RAISERROR(N'eavpivot: no attributes to pivot in {source}', 16, 1);\n  \
         IF @n_cols + {entity} > {max}\n    \
         RAISERROR(N'eavpivot: %d attribute columns plus {entity} key column(s) exceed SQL Server''s limit of {max} columns per table; exclude attributes in the job, or split the target', 16, 1, @n_cols);\n  \
         SET @bad = (SELECT TOP (1) LEFT(col, 100) FROM @attrs WHERE LEN(col + N'x') - 1 > 128 OR col = N'' ORDER BY ord);\n  \
         IF @bad IS NOT NULL\n    \
         RAISERROR(N'eavpivot: column name ''%s...'' is empty or longer than 128 characters, SQL Server''s identifier limit; exclude or rename the attribute in the job', 16, 1, @bad);\n  \
         SET @bad = (SELECT TOP (1) LEFT(c, 100) FROM (SELECT col COLLATE DATABASE_DEFAULT AS c FROM @attrs UNION ALL {keys}) names GROUP BY c HAVING COUNT(*) > 1);\n  \
         IF @bad IS NOT NULL\n    \
         RAISERROR(N'eavpivot: several attributes (or a key column) become the column ''%s'', the same identifier to SQL Server (case and trailing spaces ignored); rename or exclude them in the job', 16, 1, @bad);\n",
        source = raise_text(&plan.source_table.sql()),
        entity = plan.entity.len(),
        max = MAX_COLUMNS_PER_TABLE,
        keys = entity_names.join(" UNION ALL "),
    ) + &format!(
        // The key's type is not known here: every key column is compared by its bytes.
        "  IF EXISTS ({})\n    RAISERROR(N'{}', 16, 1);\n",
        super::query::keys_one_under_collation(d, &plan.source, &[]),
        raise_text(super::script::KEYS_ONE_UNDER_COLLATION),
    )
}

/// `@cols` (`CAST(NULL AS TYPE) AS [c], …`, the attribute columns of the `SELECT … INTO`), `@names` (`[c], …`) and `@cases` (`MAX(CASE …) AS [c], …`).
fn aggregate_lists(d: &MsSql, plan: &ScriptPlan, aggregation: Aggregation) -> String {
    let (column_type, agg) = super::script::column_type_and_aggregate(d, plan);
    let null_of_type = d.quote_literal(&format!("CAST(NULL AS {column_type}) AS "));
    let case_open = d.quote_literal(&format!("{agg}(CASE WHEN s.a = N'"));
    let case_close = d.quote_literal("' THEN s.v END) AS ");
    let items = [
        ("@cols", format!("{null_of_type} + {BRACKETED}")),
        ("@names", BRACKETED.to_string()),
        (
            "@cases",
            format!("{case_open} + REPLACE(a, N'''', N'''''') + {case_close} + {BRACKETED}"),
        ),
    ];
    let sep = "N',' + NCHAR(10) + N'  '";
    let mut out = String::new();
    match aggregation {
        Aggregation::Ordered => {
            let parts: Vec<String> = items
                .iter()
                .map(|(var, expr)| format!("      {var} = COALESCE({var} + {sep}, N'') + {expr}"))
                .collect();
            out.push_str(&format!(
                "  SET @ord = (SELECT MIN(ord) FROM @attrs);\n  \
                 WHILE @ord IS NOT NULL\n  BEGIN\n    \
                 SELECT\n{}\n    FROM @attrs WHERE ord = @ord;\n    \
                 SET @ord = (SELECT MIN(ord) FROM @attrs WHERE ord > @ord);\n  END;\n",
                parts.join(",\n")
            ));
        }
        Aggregation::ForXmlPath => {
            for (var, expr) in &items {
                out.push_str(&format!(
                    "  SET {var} = STUFF((SELECT N',' + NCHAR(10) + N'  ' + {expr} FROM @attrs ORDER BY ord FOR XML PATH(''), TYPE).value('.', 'NVARCHAR(MAX)'), 1, 4, N'');\n"
                ));
            }
        }
    }
    out.push_str(
        "  IF @cols IS NULL OR @names IS NULL OR @cases IS NULL\n    \
         RAISERROR(N'eavpivot: a column list came out NULL; nothing was run', 16, 1);\n",
    );
    out
}

/// `@create`: the empty target, by `SELECT … INTO`.
fn build_statements(d: &MsSql, plan: &ScriptPlan) -> String {
    let table = &plan.target;
    let nl = "NCHAR(10)";
    // The target is created by `SELECT … INTO` from the source itself, so the key columns
    // take the source's own types with no type name to read or spell (Babelfish has neither
    // `sys.dm_exec_describe_first_result_set` nor a working `INSERT … EXEC
    // sp_describe_first_result_set`). The join keeps SQL Server from copying an IDENTITY
    // property of a key column; `WHERE 1 = 0` creates it empty.
    let create = [
        d.quote_literal(&format!("SELECT {},", key_probe(d, plan))),
        nl.into(),
        "N'  '".into(),
        "@cols".into(),
        nl.into(),
        d.quote_literal(&format!("INTO {table}")),
        nl.into(),
        d.quote_literal(&format!(
            "FROM ({}) s CROSS JOIN (SELECT 1 AS one) j",
            query::source_rows(d, &plan.source)
        )),
        nl.into(),
        "N'WHERE 1 = 0'".into(),
    ];
    format!(
        "  SET @create = CAST(N'' AS NVARCHAR(MAX)) + {};\n",
        create.join(" + "),
    )
}

/// `@insert`: the same `INSERT` that `eavpivot run` sends for a pushdown, over `@value`.
fn insert_statement(d: &MsSql, plan: &ScriptPlan) -> String {
    let table = &plan.target;
    let nl = "NCHAR(10)";
    let keys: Vec<String> = plan
        .entity
        .iter()
        .map(|e| d.quote_ident(&super::entity_column_name(d, e)))
        .collect();
    let refs = super::entity_refs(&plan.source, "s");
    let insert = [
        d.quote_literal(&format!("INSERT INTO {table} ({}, ", keys.join(", "))),
        "@names".into(),
        "N')'".into(),
        nl.into(),
        d.quote_literal(&format!("SELECT {refs},")),
        nl.into(),
        "N'  '".into(),
        "@cases".into(),
        nl.into(),
        // The value as `eavpivot run` orders it ([`value_order`]).
        d.quote_literal(&format!(
            "FROM (SELECT {}, s0.a, ",
            super::entity_refs(&plan.source, "s0")
        )),
        "@value".into(),
        d.quote_literal(&format!(
            " AS v FROM ({}) s0) s",
            query::source_rows(d, &plan.source)
        )),
        nl.into(),
        d.quote_literal(&format!("GROUP BY {refs}")),
    ];
    format!(
        "  SET @insert = CAST(N'' AS NVARCHAR(MAX)) + {};\n",
        insert.join(" + ")
    )
}

/// `<target>__eavpivot_v`, the target's name cut so that the probe's fits SQL Server's 128
/// UTF-16 units: a target of 117 to 128 was valid while its probe was not (Msg 103).
fn probe_table(d: &MsSql, target: &TableRef) -> TableRef {
    const SUFFIX: &str = "__eavpivot_v";
    d.ident_limit()
        .cut_table(target, SUFFIX)
        .with_suffix(SUFFIX)
}

/// A text value's `MAX`/`MIN` by code point, as `eavpivot run` orders it
/// ([`crate::dialect::Query::value_in_byte_order`]): a `_CI` collation orders `a` before `B`
/// and leaves `Red` and `red` unordered, so the script kept another value of a conflict than
/// `run`. The value's type comes from an empty table made from it (`SELECT TOP (0) … INTO`,
/// inside the transaction): Babelfish has no catalog of a temporary table's columns, no
/// `TYPE_NAME` and no working `sp_describe_first_result_set`. The base type is read
/// (`system_type_id`): a value of an alias type (`CREATE TYPE name FROM NVARCHAR(10)`) was
/// ordered by the collation. Sets `@value`, then `@insert`.
fn value_order(d: &MsSql, plan: &ScriptPlan) -> String {
    let probe = probe_table(d, &plan.target);
    let as_text = |declared: &str| {
        d.value_in_byte_order("s0.v", Some(declared))
            .map(|e| d.quote_literal(&e))
            .unwrap_or_else(|| "N's0.v'".into())
    };
    format!(
        "  IF OBJECT_ID({probe_name}) IS NOT NULL\n    \
         RAISERROR(N'eavpivot: a table named {probe_text} already exists; this script never drops a table it did not create: drop or rename it', 16, 1);\n  \
         EXEC sp_executesql {create};\n  \
         SET @value_type = (SELECT t.name FROM sys.columns c JOIN sys.types t ON t.user_type_id = c.system_type_id WHERE c.object_id = OBJECT_ID({probe_name}));\n  \
         EXEC sp_executesql {drop};\n  \
         IF @value_type IN (N'nvarchar', N'nchar')\n    SET @value = {unicode};\n  \
         ELSE IF @value_type IN (N'varchar', N'char')\n    SET @value = {code_page};\n{exact}{lossy}",
        probe_name = d.quote_literal(&probe.sql()),
        probe_text = raise_text(&probe.sql()),
        create = d.quote_literal(&format!(
            "SELECT TOP (0) s.v AS v INTO {probe} FROM ({}) s",
            query::source_rows(d, &plan.source)
        )),
        drop = d.quote_literal(&format!("DROP TABLE {probe}")),
        unicode = as_text("NVARCHAR"),
        code_page = as_text("VARCHAR"),
        exact = read_exactly(d),
        lossy = refuse_lossy_values(d),
    )
}

/// Values `eavpivot run` reads as another type so that their text is exact (a MONEY as
/// `DECIMAL(19,4)`: `12.3456`, where SQL Server's own conversion keeps 2 decimals), read the
/// same way here.
fn read_exactly(d: &MsSql) -> String {
    let names: Vec<String> = super::mssql::READ_AS_DECIMAL
        .iter()
        .map(|t| d.quote_literal(t))
        .collect();
    let read = d
        .read_value("s0.v", super::mssql::READ_AS_DECIMAL[0])
        .map(|e| d.quote_literal(&e))
        .unwrap_or_else(|| "N's0.v'".into());
    format!(
        "  IF @value_type IN ({})\n    SET @value = {read};\n",
        names.join(", ")
    )
}

/// The values go into text columns through SQL Server's implicit conversion, which loses
/// digits of these types (`eavpivot run` streams them instead): refused, saying which.
fn refuse_lossy_values(d: &MsSql) -> String {
    super::mssql::TEXT_CONVERSION_LOSSES
        .iter()
        .filter(|(types, _)| !types.iter().all(|t| d.read_value("v", t).is_some()))
        .map(|(types, loss)| {
            let names: Vec<String> = types.iter().map(|t| d.quote_literal(t)).collect();
            format!(
                "  IF @value_type IN ({})\n    RAISERROR(N'eavpivot: the source''s values are %s and {}: convert them in the job''s value: (e.g. CONVERT(NVARCHAR(40), v, 3) for a FLOAT, 121 for a DATETIME) and write the script again, or use eavpivot run', 16, 1, @value_type);\n",
                names.join(", "),
                raise_text(loss)
            )
        })
        .collect()
}

fn run_in_transaction(d: &MsSql, plan: &ScriptPlan) -> String {
    let table = &plan.target;
    let exists = format!(
        "OBJECT_ID({}, N'U') IS NOT NULL",
        d.quote_literal(&table.sql())
    );
    let count = d.quote_literal(&format!("SELECT @n = COUNT_BIG(*) FROM {table}"));
    let mut out = String::new();
    let table_text = raise_text(&table.sql());
    if plan.if_exists == IfExists::Fail {
        out.push_str(&format!(
            "  IF {exists}\n    RAISERROR(N'eavpivot: target table {table_text} already exists (target.if_exists: fail); drop it, or set if_exists to replace or append', 16, 1);\n"
        ));
    }
    out.push_str("  BEGIN TRANSACTION;\n");
    match plan.if_exists {
        IfExists::Append => out.push_str(&format!(
            "  IF {exists}\n    EXEC sp_executesql {count}, N'@n BIGINT OUTPUT', @n = @before OUTPUT;\n  \
             ELSE\n    EXEC sp_executesql @create;\n"
        )),
        IfExists::Replace => out.push_str(&format!(
            "  IF {exists}\n    DROP TABLE {table};\n  EXEC sp_executesql @create;\n"
        )),
        // Merge is refused before any script is written.
        IfExists::Fail | IfExists::Merge => out.push_str("  EXEC sp_executesql @create;\n"),
    }
    out.push_str(&value_order(d, plan));
    out.push_str(&insert_statement(d, plan));
    out.push_str(&format!(
        "  EXEC sp_executesql @insert;\n  \
         SET @want = ({});\n  \
         EXEC sp_executesql {count}, N'@n BIGINT OUTPUT', @n = @got OUTPUT;\n  \
         IF @got - @before <> @want\n    \
         RAISERROR(N'eavpivot: verification failed: the target gained %I64d rows, the source has %I64d distinct entities', 16, 1, @got, @want);\n  \
         COMMIT TRANSACTION;\n  \
         PRINT CONCAT(N'eavpivot: {table_text} now holds ', @got, N' rows with ', @n_cols, N' attribute columns');\n",
        query::count_entities(d, &plan.source)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_fits_the_identifier_limit_of_a_long_target() {
        let limit = MsSql.ident_limit();
        for name in [
            "kv_wide".to_string(),
            "t".repeat(128),
            "☃".repeat(120),
            "😀".repeat(64),
        ] {
            let target = TableRef::parse(&format!("dbo.[{name}]")).expect("table name");
            let probe = probe_table(&MsSql, &target);
            assert!(limit.fits(&probe.name()), "{probe}");
            assert!(probe.name().ends_with("__eavpivot_v"), "{probe}");
            assert!(probe.sql().starts_with("dbo.["), "{probe}");
        }
        let short = TableRef::parse("kv_wide").expect("table name");
        assert_eq!(probe_table(&MsSql, &short).sql(), "kv_wide__eavpivot_v");
    }
}
