//! Property tests: anything the data can hold survives quoting. Identifiers and literals made
//! from arbitrary Unicode strings round-trip through a real SQLite (create a column with the
//! name, read it back from the catalog; insert the literal, read it back), and the naming step
//! never gives two attributes columns that the database would take for one. The strings include
//! NUL, which no quoted SQL literal may hold as it is, and SQLite text that is not UTF-8 at all.

use std::collections::{BTreeSet, HashSet};

use eavpivot::config::parse_job;
use eavpivot::dialect::prelude::*;
use eavpivot::dialect::{self, Sqlite};
use eavpivot::plan::naming::name_columns;
use proptest::prelude::*;
use rusqlite::Connection;

/// Strings from the whole of Unicode with the characters that matter to SQL over-represented.
fn hostile_text() -> impl Strategy<Value = String> {
    let tricky = prop::sample::select(vec![
        "\"", "'", "]", "[", "`", ";", "--", "/*", "\\", " ", "\n", "\t", "é", "ß", "İ", "😀",
        "\u{200b}", "%", "?", "$1", "@P1", "\0",
    ]);
    prop::collection::vec(
        prop_oneof![
            any::<char>().prop_map(|c| c.to_string()),
            tricky.prop_map(str::to_string)
        ],
        1..12,
    )
    .prop_map(|parts| parts.concat())
    .prop_filter("non-empty", |s| !s.is_empty())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sqlite_identifier_and_literal_round_trip(name in hostile_text(), value in hostile_text()) {
        let conn = Connection::open_in_memory().expect("sqlite");
        let d = Sqlite;
        // A NUL cannot be in a column name: naming refuses it (and renames), so no identifier
        // holds one; the literal below must carry it all the same.
        prop_assert_eq!(d.column_name_problem(&name).is_some(), name.contains('\0'));
        let name = name.replace('\0', "_");
        conn.execute_batch(&format!("CREATE TABLE t ({} TEXT)", d.quote_ident(&name))).expect("create");
        let got: String = conn.query_row("SELECT name FROM pragma_table_info('t')", [], |r| r.get(0)).expect("catalog");
        prop_assert_eq!(&got, &name);
        conn.execute_batch(&format!("INSERT INTO t VALUES ({})", d.quote_literal(&value))).expect("insert");
        let (back, kind): (Vec<u8>, String) = conn.query_row(&format!("SELECT CAST({0} AS BLOB), typeof({0}) FROM t", d.quote_ident(&name)), [], |r| Ok((r.get(0)?, r.get(1)?))).expect("read");
        prop_assert_eq!(back, value.as_bytes().to_vec());
        prop_assert_eq!(kind, "text");
        // As an attribute key compared in the pushdown: the literal equals the stored text.
        let hits: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM t WHERE {} = {}", d.attribute_key(&d.quote_ident(&name)), d.attribute_key_literal(&value)), [], |r| r.get(0)).expect("compare");
        prop_assert_eq!(hits, 1);
    }

    #[test]
    fn sqlite_text_that_is_not_utf8_round_trips(bytes in prop::collection::vec(any::<u8>(), 1..24)) {
        let conn = Connection::open_in_memory().expect("sqlite");
        conn.execute_batch(&format!("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ({})", Sqlite.text_bytes_literal(&bytes))).expect("insert");
        let (back, kind): (Vec<u8>, String) = conn.query_row("SELECT CAST(v AS BLOB), typeof(v) FROM t", [], |r| Ok((r.get(0)?, r.get(1)?))).expect("read");
        prop_assert_eq!(back, bytes.clone());
        prop_assert_eq!(kind, "text");
        let hits: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM t WHERE v COLLATE BINARY = {}", Sqlite.text_bytes_literal(&bytes)), [], |r| r.get(0)).expect("compare");
        prop_assert_eq!(hits, 1);
    }

    #[test]
    fn naming_never_merges_two_attributes(names in prop::collection::btree_set(hostile_text(), 1..40)) {
        let job = parse_job(JOB, std::path::Path::new("prop.yaml")).expect("job");
        let attrs: Vec<String> = names.into_iter().collect();
        for d in dialect::ALL {
            let (columns, _) = name_columns(&job, d, &attrs).expect("rename mode never fails");
            prop_assert_eq!(columns.len(), attrs.len());
            let keys: HashSet<String> = columns.iter().map(|c| d.ident_key(&c.column)).collect();
            prop_assert_eq!(keys.len(), columns.len(), "{} merged two columns", d.name());
            // The job writes its entity `ID` unquoted: the database folds it (PostgreSQL to
            // `id`), so an attribute "ID" may keep its name there but never the folded one.
            let entity_column = d.unquoted_case().fold("ID");
            prop_assert!(!keys.contains(&d.ident_key(&entity_column)), "{} reused the entity column {}", d.name(), entity_column);
            for c in &columns {
                prop_assert!(d.ident_limit().fits(&c.column), "{} over the limit: {:?}", d.name(), c.column);
                prop_assert!(d.column_name_problem(&c.column).is_none());
            }
            let attrs_back: BTreeSet<&String> = columns.iter().map(|c| &c.attribute).collect();
            prop_assert_eq!(attrs_back.len(), attrs.len());
        }
        // And SQLite accepts the whole set as one table.
        let (columns, _) = name_columns(&job, &Sqlite, &attrs).expect("names");
        let cols: Vec<String> = columns.iter().map(|c| format!("{} TEXT", Sqlite.quote_ident(&c.column))).collect();
        let conn = Connection::open_in_memory().expect("sqlite");
        conn.execute_batch(&format!("CREATE TABLE t (\"ID\" INTEGER, {})", cols.join(", "))).expect("create wide table");
    }
}

const JOB: &str = "
name: prop
source: { table: KV }
entity: [ID]
attribute: K
value: V
target: { table: WIDE }
";

#[test]
fn case_and_trailing_space_variants_get_their_own_columns() {
    let job = parse_job(JOB, std::path::Path::new("t.yaml")).expect("job");
    let attrs: Vec<String> = ["Color", "color", "Color ", "id"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (cols, renamed) = name_columns(&job, &dialect::MsSql, &attrs).expect("names");
    assert_eq!(cols[0].column, "Color");
    assert!(cols[1].column.starts_with("color~"), "{:?}", cols[1]);
    assert!(cols[2].column.starts_with("Color~"), "{:?}", cols[2]);
    assert!(
        cols[3].column.starts_with("id~"),
        "entity column ID collides: {:?}",
        cols[3]
    );
    assert_eq!(renamed.len(), 3);
    // PostgreSQL keeps quoted attribute names apart by case; the entity `ID`, written
    // unquoted, is the column `id` there (as in the operator's own SQL), so `id` collides.
    let (pg, _) = name_columns(&job, &dialect::Postgres, &attrs).expect("names");
    assert_eq!(
        pg.iter()
            .take(3)
            .map(|c| c.column.as_str())
            .collect::<Vec<_>>(),
        ["Color", "color", "Color "]
    );
    assert!(pg[3].column.starts_with("id~"), "{:?}", pg[3]);
}

#[test]
fn collisions_are_refused_before_ddl_under_on_collision_error() {
    let text = format!("{JOB}pivot: {{ on_collision: error }}\n");
    let job = parse_job(&text, std::path::Path::new("t.yaml")).expect("job");
    let attrs: Vec<String> = vec!["Color".into(), "COLOR".into()];
    let err = name_columns(&job, &Sqlite, &attrs).expect_err("must refuse");
    assert!(err.to_string().contains("'COLOR'"), "{err}");
}

#[test]
fn postgres_limit_counts_bytes_not_characters() {
    let job = parse_job(JOB, std::path::Path::new("t.yaml")).expect("job");
    // 32 two-byte characters: 64 bytes, over PostgreSQL's 63 though only 32 characters.
    let long = "é".repeat(32);
    let (cols, renamed) =
        name_columns(&job, &dialect::Postgres, std::slice::from_ref(&long)).expect("names");
    assert!(cols[0].column.len() <= 63, "{}", cols[0].column);
    assert_eq!(renamed[0].attribute, long);
}

/// The case the property test once shrank to: an attribute spelled like the unquoted entity
/// `ID`. PostgreSQL folds the entity to `id`, so "ID" keeps its name there and "id" must not;
/// every other database treats both as the entity's name.
#[test]
fn attributes_spelled_like_the_entity_never_take_its_column() {
    let job = parse_job(JOB, std::path::Path::new("t.yaml")).expect("job");
    let attrs: Vec<String> = vec!["ID".into(), "id".into()];
    for d in dialect::ALL {
        let (columns, _) = name_columns(&job, d, &attrs).expect("names");
        let entity = d.ident_key(&d.unquoted_case().fold("ID"));
        for c in &columns {
            assert_ne!(d.ident_key(&c.column), entity, "{}: {:?}", d.name(), c);
        }
    }
    let (pg, _) = name_columns(&job, &dialect::Postgres, &attrs).expect("names");
    assert_eq!(
        pg[0].column, "ID",
        "PostgreSQL's entity column is id: {pg:?}"
    );
}
