use super::query;
use super::*;

#[test]
fn identifiers_are_quoted_with_the_quote_doubled() {
    assert_eq!(Sqlite.quote_ident("a\"b"), "\"a\"\"b\"");
    assert_eq!(Postgres.quote_ident("a\"b"), "\"a\"\"b\"");
    assert_eq!(MsSql.quote_ident("a]b"), "[a]]b]");
    assert_eq!(MariaDb.quote_ident("a`b"), "`a``b`");
}

#[test]
fn literals_cannot_be_escaped_from() {
    assert_eq!(Sqlite.quote_literal("it's"), "'it''s'");
    assert_eq!(MsSql.quote_literal("it's"), "N'it''s'");
    // MariaDB treats backslash as an escape; a hex literal has no escapes at all.
    assert_eq!(
        MariaDb.quote_literal("a\\'"),
        "CONVERT(X'615C27' USING utf8mb4)"
    );
    // PostgreSQL: a backslash makes an escape string, read the same under either
    // `standard_conforming_strings`; without one the literal stays standard.
    assert_eq!(Postgres.quote_literal("it's"), "'it''s'");
    assert_eq!(Postgres.quote_literal("a\\'b"), "E'a\\\\''b'");
    assert_eq!(
        Postgres.quote_literal("\\\0x"),
        "(E'\\\\' || chr(0) || E'x')"
    );
}

#[test]
fn mssql_compares_attribute_names_exactly() {
    let key = MsSql.attribute_key("AE.ELEMENT_DESC");
    assert!(key.contains("COLLATE Latin1_General_100_BIN2"), "{key}");
    assert_eq!(MsSql.attribute_key_literal("Color "), "N'Color |'");
    assert_eq!(
        MsSql.decode_attribute_key(MsSql.encode_attribute_key("x|")),
        "x|"
    );
}

#[test]
fn case_insensitive_identifiers_lower_one_character_at_a_time() {
    // MariaDB lowers `İ` to `i` (its `utf8mb3_general_ci` table: `Duplicate column name`
    // for the pair); a whole-string lowering gives `i̇` and a final-sigma `ς`.
    assert_eq!(MariaDb.ident_key("İ"), MariaDb.ident_key("i"));
    assert_eq!(MariaDb.ident_key("ΑΣ"), MariaDb.ident_key("ασ"));
    assert_ne!(MariaDb.ident_key("é"), MariaDb.ident_key("e"));
    assert_eq!(MsSql.ident_key("ΑΣ "), MsSql.ident_key("ασ"));
    // SQL Server's accent-sensitive default collations keep `İ` apart from `i`.
    assert_ne!(MsSql.ident_key("İ"), MsSql.ident_key("i"));
}

#[test]
fn identifier_limits_count_the_right_units() {
    assert!(IdentLimit::Bytes(63).fits(&"a".repeat(63)));
    assert!(!IdentLimit::Bytes(63).fits(&"é".repeat(32)));
    assert!(IdentLimit::Chars(64).fits(&"é".repeat(64)));
    assert!(!IdentLimit::Utf16(128).fits(&"😀".repeat(65)));
}

#[test]
fn every_dialect_is_found_by_name() {
    for d in ALL {
        assert_eq!(by_name(d.name()).map(|x| x.name()), Some(d.name()));
    }
    assert!(by_name("db2").is_none());
}

#[test]
fn a_nul_in_a_literal_is_spliced_in_by_expression() {
    assert_eq!(Sqlite.quote_literal("a\0b"), "('a' || char(0) || 'b')");
    assert_eq!(Postgres.quote_literal("a\0'"), "('a' || chr(0) || '''')");
    assert_eq!(MsSql.quote_literal("\0x"), "(N'' + NCHAR(0) + N'x')");
    assert_eq!(
        MsSql.attribute_key_literal("a\0"),
        "(N'a' + NCHAR(0) + N'|')"
    );
    // A hex literal has room for any byte.
    assert_eq!(
        MariaDb.quote_literal("a\0"),
        "CONVERT(X'6100' USING utf8mb4)"
    );
    assert_eq!(MariaDb.attribute_key_literal("a\0"), "X'6100'");
    assert_eq!(Sqlite.quote_literal("plain"), "'plain'");
}

#[test]
fn text_that_is_not_utf8_has_a_literal_that_stays_text() {
    assert_eq!(
        Sqlite.text_bytes_literal(&[0x80, 0xFE]),
        "CAST(X'80FE' AS TEXT)"
    );
    assert_eq!(MariaDb.text_bytes_literal(&[0x80]), "X'80'");
}

fn delta_job(entity: &str) -> crate::config::Job {
    crate::config::parse_job(
        &format!(
            "name: d\nsource: {{table: kv, alias: s, joins: [{{table: e, alias: x, on: \"x.id = s.id\"}}], where: \"s.deleted = 0\", changed: \"s.modified > 5\"}}\nentity: {entity}\nattribute: s.attr\nvalue: s.val\ntarget: {{table: w, if_exists: merge}}\n"
        ),
        std::path::Path::new("d.yaml"),
    )
    .expect("job")
}

/// `source.changed` restricts the rows to the entities it names, each with all its rows in
/// the `where` scope (joins included): one key by `IN`, a composite key by `EXISTS`.
#[test]
fn changed_restricts_the_source_to_whole_entities_in_the_scope() {
    let one = query::source_rows(&Sqlite, &super::SourceQuery::from(&delta_job("s.id")));
    assert!(
        one.contains("WHERE r.e0 IN (SELECT c.e0 FROM (SELECT s.id AS e0"),
        "{one}"
    );
    assert!(
        one.contains("WHERE (s.deleted = 0) AND (s.modified > 5)"),
        "{one}"
    );
    // The rows themselves keep the scope and only the scope.
    assert!(
        one.contains("JOIN e x ON x.id = s.id\n  WHERE s.deleted = 0) r"),
        "{one}"
    );
    let two = query::source_rows(
        &Postgres,
        &super::SourceQuery::from(&delta_job("[s.id, x.region]")),
    );
    assert!(
        two.contains("WHERE EXISTS (SELECT 1 FROM (SELECT s.id AS e0, x.region AS e1"),
        "{two}"
    );
    assert!(two.contains("c.e0 = r.e0 AND c.e1 = r.e1"), "{two}");
    // Without changed, the source is exactly as before.
    let mut plain = delta_job("s.id");
    plain.source.changed = None;
    assert!(!query::source_rows(&Sqlite, &super::SourceQuery::from(&plain)).contains(" r\n"));
    assert_eq!(
        query::source_rows(&Sqlite, &super::SourceQuery::from(&plain)),
        query::source_rows_filtered(
            &Sqlite,
            &super::SourceQuery::from(&plain),
            Some("s.deleted = 0")
        )
    );
}

/// A delta that tests only the entity key selects whole entities by itself: where the engine
/// compares constants by its own equality (PostgreSQL) the rows are filtered by it directly,
/// NULL keys left out as the `IN` leaves them out; elsewhere, and for any other delta, the
/// `IN`/`EXISTS` stays.
#[test]
fn a_delta_on_the_entity_key_alone_filters_the_rows_directly_where_that_is_exact() {
    let mut by_key = delta_job("[s.id, x.region]");
    by_key.source.changed = Some("s.id >= 100 AND s.id < 200 AND x.region IN ('eu')".into());
    let source = super::SourceQuery::from(&by_key);
    assert!(source.changed_by_key);
    let direct = query::source_rows(&Postgres, &source);
    assert!(
        direct.ends_with("WHERE (s.deleted = 0) AND ((s.id >= 100 AND s.id < 200 AND x.region IN ('eu')) AND s.id IS NOT NULL AND x.region IS NOT NULL)"),
        "{direct}"
    );
    assert!(
        !direct.contains("EXISTS") && !direct.contains(" r\n"),
        "{direct}"
    );
    for other in [&Sqlite as &dyn Dialect, &MariaDb, &MsSql] {
        let kept = query::source_rows(other, &source);
        assert!(kept.contains("WHERE EXISTS (SELECT 1 FROM"), "{kept}");
    }
    // The job's own delta names `s.modified`: not the key, so the IN stays on PostgreSQL.
    let general = super::SourceQuery::from(&delta_job("s.id"));
    assert!(!general.changed_by_key);
    assert!(query::source_rows(&Postgres, &general).contains("WHERE r.e0 IN (SELECT"));
}

#[test]
fn mssql_reads_datetime_text_through_datetime2() {
    // `yyyy-mm-dd hh:mm:ss` is year-day-month to DATETIME under a `dmy` language.
    let typed = |sql_type: &str, kind: ColumnKind| Typed {
        sql_type: sql_type.into(),
        kind,
        why: String::new(),
        round_trips: false,
        by_value: false,
    };
    let stamp = ColumnKind::Timestamp { fraction: 3 };
    assert_eq!(
        MsSql.cast_to("v", &typed("DATETIME", stamp.clone())),
        "CAST(CAST(v AS DATETIME2(7)) AS DATETIME)"
    );
    assert_eq!(
        MsSql.cast_to("v", &typed("smalldatetime", stamp.clone())),
        "CAST(CAST(v AS DATETIME2(7)) AS smalldatetime)"
    );
    assert_eq!(
        MsSql.cast_to("v", &typed("DATETIME2(3)", stamp)),
        "CAST(v AS DATETIME2(3))"
    );
    assert_eq!(
        MsSql.cast_to(
            "v",
            &typed(
                "NVARCHAR(MAX)",
                ColumnKind::Text {
                    chars: u64::MAX,
                    utf16: u64::MAX,
                    bytes: u64::MAX
                }
            )
        ),
        "v"
    );
    let table = TableRef::parse("t").expect("name");
    let cells = [
        MsSqlCell::Param,
        MsSqlCell::Null,
        MsSqlCell::ParamAs("DATETIME2(7)"),
    ];
    let sql = MsSql.insert_values_nulls_inline(
        &table,
        &["a".into(), "b".into(), "c".into()],
        2,
        |_, c| cells[c],
    );
    assert_eq!(
        sql,
        "INSERT INTO t ([a], [b], [c]) VALUES (@P1, NULL, CAST(@P2 AS DATETIME2(7))), (@P3, NULL, CAST(@P4 AS DATETIME2(7)))"
    );
}

#[test]
fn mssql_writes_only_in_the_connected_database() {
    let table = |t: &str| TableRef::parse(t).expect("name");
    let problem = MsSql.target_name_problem(&table("[other db].dbo.t"));
    assert!(
        problem
            .as_deref()
            .is_some_and(|p| p.contains("names the database other db")),
        "{problem:?}"
    );
    assert_eq!(MsSql.target_name_problem(&table("dbo.t")), None);
    assert_eq!(Postgres.target_name_problem(&table("db.public.t")), None);
}
