//! Evidence 1 for SQL Server: every statement eavpivot would send for the bundled jobs, and the
//! `script` output, is parsed by an independent T-SQL parser (`sqlparser`'s `MsSqlDialect`).
//!
//! The statements come from the same dry-run loop a real run uses, answered by the scripted
//! backend (no server). One gap of the parser is handled openly: it does not know
//! `BEGIN TRY … END TRY BEGIN CATCH … END CATCH`, so the script is checked to have exactly that
//! frame, one marker per line, and the three parts inside it are parsed on their own.
//! `INSERT BULK` (the stream's bulk load) is a statement only a bulk-load client may send, so no
//! T-SQL parser takes it: its table and column list are parsed as those of an `INSERT INTO`,
//! and the rest must be exactly the bulk options tiberius is given.
#![cfg(feature = "mssql")] // needs the mssql driver in the build

use crate::dry_run;

use dry_run::{bundled_jobs, dry_run_statements, repo};
use eavpivot::config::{self, StrategyName};
use eavpivot::dialect::mssql_script::{self, Aggregation};
use eavpivot::dialect::prelude::*;
use eavpivot::dialect::MsSql;
use sqlparser::dialect::MsSqlDialect;
use sqlparser::parser::Parser;

const BULK_OPTIONS: &str = " WITH (CHECK_CONSTRAINTS, KEEP_NULLS, FIRE_TRIGGERS)";

fn parse(what: &str, sql: &str) {
    if let Some(rest) = sql.strip_prefix("INSERT BULK ") {
        let target = rest
            .strip_suffix(BULK_OPTIONS)
            .unwrap_or_else(|| panic!("{what}: INSERT BULK without the bulk options: {sql}"));
        return parse(what, &format!("INSERT INTO {target} SELECT 1"));
    }
    if let Err(e) = Parser::parse_sql(&MsSqlDialect {}, sql) {
        panic!("T-SQL that sqlparser's MsSqlDialect rejects ({what}): {e}\n----\n{sql}\n----");
    }
}

#[tokio::test]
async fn every_statement_of_every_bundled_job_parses() {
    for job in bundled_jobs() {
        for strategy in [StrategyName::Pushdown, StrategyName::Stream] {
            // Transforms run only in the stream; such jobs refuse a forced pushdown by design.
            if strategy == StrategyName::Pushdown && !job.transforms.is_empty() {
                continue;
            }
            let sent = dry_run_statements(&MsSql, &job, strategy).await;
            assert!(
                sent.len() >= 5,
                "{}: too few statements: {sent:?}",
                job.name
            );
            for sql in &sent {
                parse(&format!("{} {strategy:?}", job.name), sql);
            }
        }
        // What a run sends besides the logged statements: the type probe's wrapper, the
        // rollback, the conflict sample, and a full-size streaming load.
        let d = &MsSql;
        parse(
            "describe",
            &d.describe_first_result_set(&d.describe_entity(&eavpivot::plan::source_query(&job))),
        );
        parse("rollback", &d.rollback());
        parse(
            "conflict sample",
            &d.limit(
                &eavpivot::dialect::query::conflicts(d, &eavpivot::plan::source_query(&job)),
                10,
            ),
        );
        parse(
            "pairs survey",
            &eavpivot::dialect::query::pairs_per_attribute(d, &eavpivot::plan::source_query(&job)),
        );
        let cols: Vec<String> = vec!["ITEM_ID".into(), "Color ]x".into(), "Weight (kg)".into()];
        parse("stream load", &d.insert_values(&job.target.table, &cols, 3));
        parse("bulk load", &d.stream_load(&job.target.table, &cols).0);
        let staging = job.target.table.with_suffix("__eavpivot_0123abcd");
        let replaced = job.target.table.with_suffix("__eavpivot_old_0123abcd");
        for sql in d.swap_in(&staging, &job.target.table, Some(&replaced)) {
            parse("swap in", &sql);
        }
        parse("table identity", &d.table_identity(&job.target.table));
        parse("drop", &d.drop_table(&staging));
    }
}

#[test]
#[should_panic(expected = "rejects")]
fn a_bulk_load_with_a_broken_column_list_is_caught() {
    parse(
        "broken",
        &format!("INSERT BULK t ([a], [b]]){BULK_OPTIONS}"),
    );
}

#[test]
fn hostile_attribute_names_stay_inside_quotes() {
    let d = &MsSql;
    for name in [
        "a]b",
        "x'; DROP TABLE t; --",
        "Color ",
        "[",
        "]]",
        "N'",
        "ü\u{1F600}",
    ] {
        let sql = format!(
            "SELECT MAX(CASE WHEN s.a = {} THEN s.v END) AS {} FROM t s",
            d.attribute_key_literal(name),
            d.quote_ident(name)
        );
        let parsed =
            Parser::parse_sql(&MsSqlDialect {}, &sql).unwrap_or_else(|e| panic!("{name:?}: {e}"));
        assert_eq!(parsed.len(), 1, "{name:?} split the statement: {sql}");
    }
}

/// The script's prelude, TRY body and CATCH body, with the frame checked.
fn split_try_catch(script: &str) -> (String, String, String) {
    let lines: Vec<&str> = script.lines().collect();
    let at = |marker: &str| {
        let found: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].trim() == marker)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "script must have exactly one '{marker}' line"
        );
        found[0]
    };
    let (try_at, end_try, catch_at, end_catch) = (
        at("BEGIN TRY"),
        at("END TRY"),
        at("BEGIN CATCH"),
        at("END CATCH;"),
    );
    assert!(try_at < end_try && end_try + 1 == catch_at && catch_at < end_catch);
    assert_eq!(end_catch + 1, lines.len(), "nothing may follow END CATCH");
    let part = |a: usize, b: usize| lines[a..b].join("\n");
    (
        part(0, try_at),
        part(try_at + 1, end_try),
        part(catch_at + 1, end_catch),
    )
}

#[test]
fn script_output_parses_in_both_variants() {
    // Jobs with transforms are refused by design (a standalone script cannot run them).
    for job in bundled_jobs()
        .into_iter()
        .filter(|j| j.transforms.is_empty())
    {
        for aggregation in [Aggregation::Ordered, Aggregation::ForXmlPath] {
            let script = mssql_script::render(&eavpivot::plan::script_plan(&job), aggregation)
                .expect("script renders");
            assert!(
                !script.lines().any(|l| l.trim().eq_ignore_ascii_case("GO")),
                "no GO"
            );
            // The key types come from `SELECT … INTO`, not from a describe procedure that
            // Babelfish cannot `INSERT … EXEC` (tests/mssql_live.rs runs the script there).
            assert!(
                !script.contains("sp_describe_first_result_set")
                    && !script.contains("dm_exec_describe_first_result_set"),
                "{aggregation:?}: the script must not need a describe procedure"
            );
            let (prelude, body, catch) = split_try_catch(&script);
            parse("script prelude", &prelude);
            parse("script body", &body);
            parse("script catch", &catch);
            for needle in [
                "SET XACT_ABORT ON",
                "(N'[' + REPLACE(col, N']', N']]') + N']')",
                "sp_executesql @create",
                "CROSS JOIN (SELECT 1 AS one) j",
                "N'WHERE 1 = 0'",
                "sp_executesql @insert",
                "ROLLBACK TRANSACTION",
                "COMMIT TRANSACTION",
                "> 128",
            ] {
                assert!(
                    script.contains(needle),
                    "{:?}: missing {needle}",
                    aggregation
                );
            }
            match aggregation {
                Aggregation::Ordered => {
                    assert!(
                        script.contains("WHILE @ord IS NOT NULL")
                            && !script.contains("FOR XML")
                            && !script.contains("STRING_AGG")
                    )
                }
                Aggregation::ForXmlPath => {
                    assert!(script.contains("FOR XML PATH('')") && !script.contains("STRING_AGG"))
                }
            }
        }
    }
}

#[test]
fn sample_data_parses() {
    let dir = repo().join("sql/mssql");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("sql/mssql exists") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|x| x == "sql") {
            let text = std::fs::read_to_string(&path).expect("readable");
            parse(&path.display().to_string(), &text);
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// The `script` output is also committed, so a reviewer sees every change to it:
/// tests/golden/mssql/script/<job>.sql and <job>.for_xml_path.sql
/// (re-bless with `EAVPIVOT_BLESS=1 cargo test --test golden mssql_tsql_parse`).
#[test]
fn script_output_matches_its_golden_files() {
    let mut failures = Vec::new();
    for job in bundled_jobs() {
        for (aggregation, suffix) in [
            (Aggregation::Ordered, ""),
            (Aggregation::ForXmlPath, ".for_xml_path"),
        ] {
            let Ok(got) = mssql_script::render(&eavpivot::plan::script_plan(&job), aggregation)
            else {
                continue;
            };
            let path = repo().join(format!(
                "tests/golden/mssql/script/{}{suffix}.sql",
                job.name
            ));
            if std::env::var_os("EAVPIVOT_BLESS").is_some() {
                std::fs::create_dir_all(path.parent().expect("dir")).expect("create golden dir");
                std::fs::write(&path, &got).expect("write golden");
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            if want != got {
                failures.push(format!(
                    "golden mismatch: {}\n===== expected =====\n{want}\n===== got =====\n{got}",
                    path.display()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(re-bless with EAVPIVOT_BLESS=1 cargo test --test golden mssql_tsql_parse)",
        failures.join("\n")
    );
}

/// `if_exists: merge` on SQL Server: every statement the merge sends (catalog read, ADD
/// COLUMN, the survey, the untouched counts, UPDATE … FROM then INSERT … WHERE NOT EXISTS,
/// the delete of missing entities) parses as T-SQL, with hostile column names.
#[test]
fn merge_statements_parse() {
    use eavpivot::dialect::merge::{self, MergeColumns};
    let d = MsSql;
    let target = config::TableRef::parse("dbo.WIDE").expect("table");
    let staging = config::TableRef::parse("dbo.WIDE__eavpivot_0123abcd").expect("table");
    let keys = vec!["item_id".to_string(), "Sub ]Key".to_string()];
    let set = vec![
        "Color".to_string(),
        "it's ]x".to_string(),
        "naïve ☃".to_string(),
    ];
    let cleared = vec!["gone; DROP TABLE x --".to_string()];
    let cols = MergeColumns {
        keys: &keys,
        set: &set,
        cleared: &cleared,
        spelled: &keys[1..],
        floats: &set[..1],
    };
    parse("table columns", &d.table_columns(&target));
    parse("column types", &d.column_types(&target));
    parse(
        "add column",
        &d.add_column(&target, "new ]col", "NVARCHAR(MAX)"),
    );
    parse("survey", &merge::survey(&d, &target, &staging, &cols));
    let all: Vec<String> = set.iter().chain(&cleared).cloned().collect();
    parse(
        "untouched",
        &merge::untouched_counts(&d, &target, &staging, &keys, &all),
    );
    let upsert = merge::upsert(&d, &target, &staging, &cols);
    assert_eq!(upsert.len(), 2, "UPDATE then INSERT: {upsert:#?}");
    assert!(upsert[0].starts_with("UPDATE t SET") && upsert[1].starts_with("INSERT INTO"));
    for sql in &upsert {
        parse("upsert", sql);
    }
    parse(
        "delete missing",
        &merge::delete_missing(&d, &target, &staging, &keys),
    );
}
