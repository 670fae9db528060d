use super::*;
use crate::config::parse_job;
use crate::dialect::{MariaDb, MsSql, Postgres, Sqlite};

fn job(extra: &str) -> Job {
    let text = format!(
        "name: t\nsource: {{ table: KV }}\nentity: [ID]\nattribute: K\nvalue: V\ntarget: {{ table: W }}\n{extra}"
    );
    parse_job(&text, std::path::Path::new("t.yaml")).expect("valid job")
}

fn names(job: &Job, dialect: &dyn Dialect, attrs: &[&str]) -> Vec<String> {
    let attrs: Vec<String> = attrs.iter().map(|s| s.to_string()).collect();
    name_columns(job, dialect, &attrs)
        .expect("named")
        .0
        .into_iter()
        .map(|c| c.column)
        .collect()
}

#[test]
fn attribute_names_are_kept_wherever_possible() {
    let j = job("");
    let odd = [
        "a]b",
        "it's",
        "semi;colon",
        "dash--dash",
        "Ünïcödé 😀",
        " lead",
        "SELECT",
    ];
    for d in [&Sqlite as &dyn Dialect, &Postgres, &MsSql] {
        assert_eq!(names(&j, d, &odd), odd, "{}", d.name());
    }
}

#[test]
fn disambiguation_is_stable_and_order_independent_for_the_renamed() {
    let j = job("");
    let a = names(&j, &Sqlite, &["Color", "color"]);
    let b = names(&j, &Sqlite, &["Color", "x", "color"]);
    assert_eq!(a[1], b[2], "the suffix depends on the attribute alone");
    assert!(a[1].starts_with("color~") && a[1].len() == "color~".len() + 6);
}

#[test]
fn prefix_suffix_and_rename_apply_before_checks() {
    let j = job("pivot: { prefix: 'p_', suffix: '_s', rename: { a: Alpha } }\n");
    assert_eq!(names(&j, &Sqlite, &["a", "b"]), ["p_Alpha_s", "p_b_s"]);
}

#[test]
fn too_long_and_refused_names_are_cut_to_fit_with_a_hash() {
    let j = job("");
    let long = "x".repeat(200);
    let col = &names(&j, &MariaDb, &[long.as_str(), "trailing "])[..];
    assert_eq!(col[0].chars().count(), 64);
    assert!(col[0].contains('~'));
    assert!(!col[1].ends_with(' '), "{:?}", col[1]);
    let mssql = names(&j, &MsSql, &[long.as_str()]);
    assert_eq!(mssql[0].encode_utf16().count(), 128);
}

#[test]
fn ten_megabyte_names_are_named_in_linear_time() {
    let j = job("");
    let long = "N".repeat(10 * 1024 * 1024);
    let wide = "é".repeat(5 * 1024 * 1024);
    let started = std::time::Instant::now();
    for d in [&Sqlite as &dyn Dialect, &Postgres, &MariaDb, &MsSql] {
        let cols = names(&j, d, &[long.as_str(), wide.as_str()]);
        assert!(d.ident_limit().fits(&cols[0]) && d.ident_limit().fits(&cols[1]));
    }
    // Quadratic took minutes; linear is well under a second even unoptimised.
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(names(&j, &Postgres, &[long.as_str()])[0].len(), 63);
    assert_eq!(
        names(&j, &MsSql, &[wide.as_str()])[0]
            .encode_utf16()
            .count(),
        128
    );
}

#[test]
fn refusals_show_a_long_name_cut_with_its_length() {
    let j = job("pivot: { on_collision: error }\n");
    let long = "N".repeat(1_000_000);
    let err = name_columns(&j, &Postgres, &[long]).expect_err("over the limit");
    let msg = err.to_string();
    assert!(msg.len() < 400, "{msg}");
    assert!(msg.contains("…' (1000000 bytes)"), "{msg}");
}

#[test]
fn key_columns_fold_and_older_targets_still_match() {
    let j = job("");
    // The entity `ID` is `id` on PostgreSQL: the attribute `id` collides with it, `ID` does not.
    let pg = names(&j, &Postgres, &["ID", "id"]);
    assert!(pg[0] == "ID" && pg[1].starts_with("id~"), "{pg:?}");
    let sqlite = names(&j, &Sqlite, &["ID"]);
    assert!(sqlite[0].starts_with("ID~"), "{sqlite:?}");
    let shape = |name: &str| TableShape {
        table: crate::config::TableRef::parse("W").expect("table"),
        entity: vec![crate::dialect::EntityColumn {
            name: name.into(),
            sql_type: None,
        }],
        columns: Vec::new(),
        column_type: "text".into(),
        primary_key: true,
    };
    let existing = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    // Exact first: nothing to say.
    let mut exact = shape("id");
    assert!(match_existing_keys(&Postgres, &mut exact, &existing(&["ID", "id", "x"])).is_empty());
    assert_eq!(exact.entity[0].name, "id");
    // Then folded: the older quoted column, with a note naming it.
    let mut older = shape("id");
    let notes = match_existing_keys(&Postgres, &mut older, &existing(&["ID", "x"]));
    assert_eq!(older.entity[0].name, "ID");
    assert!(notes.len() == 1 && notes[0].contains("\"ID\""), "{notes:?}");
    // Neither: left for the merge to refuse by name.
    let mut none = shape("id");
    assert!(match_existing_keys(&Postgres, &mut none, &existing(&["key"])).is_empty());
    assert_eq!(none.entity[0].name, "id");
}

/// The suffixes of names already in targets depend on the hash: it is 64-bit FNV-1a, the
/// published test vectors, whichever implementation computes it.
#[test]
fn the_name_hash_is_fnv1a_64() {
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
}

/// Target `W` with entity columns `entity` and the planned `columns`.
fn table_w(entity: &[&str], columns: Vec<crate::dialect::PivotColumn>) -> TableShape {
    TableShape {
        table: crate::config::TableRef::parse("W").expect("table"),
        entity: entity
            .iter()
            .map(|name| crate::dialect::EntityColumn {
                name: name.to_string(),
                sql_type: None,
            })
            .collect(),
        columns,
        column_type: "text".into(),
        primary_key: true,
    }
}

/// A merge takes an existing column for an attribute renamed in this run only when that
/// column is the attribute's own natural name (renamed only because of another planned
/// column). A name made legal (trailing space trimmed, NUL replaced, cut to the limit) has a
/// stem that is another attribute's column: seed 1796474477 put `a ` into `a` on MariaDB.
#[test]
fn a_merge_never_takes_the_stem_of_a_name_made_legal() {
    let long = "x".repeat(80);
    let cut = &long[..56]; // PostgreSQL: 63 bytes less the `~` and six hex digits
    let cases: [(&dyn Dialect, &str, &str, &str); 4] = [
        (&MariaDb, "", "a ", "a"),
        (&MsSql, "", "a ", "a"),
        (&Postgres, "", "x\0y", "x_y"),
        (&Postgres, "", &long, cut),
    ];
    for (dialect, extra, attribute, other) in cases {
        let j = job(extra);
        let attrs = vec![attribute.to_string()];
        let (columns, _) = name_columns(&j, dialect, &attrs).expect("named");
        let planned = columns[0].column.clone();
        assert_eq!(strip_tag(&planned, attribute), other, "{attribute:?}");
        let mut shape = table_w(&["id"], columns);
        let existing = vec![other.to_string()];
        let natural = NaturalNames::of(&j);
        match_existing_columns(
            dialect,
            &mut shape,
            &existing,
            (&natural, j.pivot.on_collision),
        )
        .expect("matched");
        assert_eq!(
            shape.columns[0].column,
            planned,
            "{} {attribute:?}: must keep its own column, not take {other:?}",
            dialect.name()
        );
    }
    // The case it is for still holds: `color`, planned `color~…` beside `Color` in this run,
    // takes the target's `color` that an earlier run made for it.
    let j = job("");
    let attrs = vec!["Color".to_string(), "color".to_string()];
    let (columns, _) = name_columns(&j, &MariaDb, &attrs).expect("named");
    assert!(columns[1].column.starts_with("color~"), "{columns:?}");
    let mut shape = table_w(&[], columns);
    let natural = NaturalNames::of(&j);
    let existing = vec!["color".to_string()];
    match_existing_columns(
        &MariaDb,
        &mut shape,
        &existing,
        (&natural, j.pivot.on_collision),
    )
    .expect("matched");
    assert_eq!(shape.columns[1].column, "color");
}

/// The merge's `where` guard finds an attribute the run did not read in the column a run
/// that read it would use: `a ` on MariaDB in `a~…`, not in `a` (seed 1796475657).
#[test]
fn an_unplanned_attribute_is_found_in_its_own_column() {
    let j = job("");
    let planned = vec!["a1".to_string()];
    let (columns, _) = name_columns(&j, &MariaDb, &planned).expect("named");
    let shape = table_w(&[], columns);
    let trailing = names(&j, &MariaDb, &["a "])[0].clone();
    assert!(trailing.starts_with("a~"), "{trailing}");
    let existing: Vec<String> = ["a", trailing.as_str(), "a1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let unplanned = vec!["a ".to_string(), "a".to_string()];
    let got = columns_of_unplanned(&j, &MariaDb, &shape, &existing, &unplanned).expect("named");
    assert_eq!(got, [trailing, "a".to_string()]);
    // Under on_collision: error too: it names columns that exist, it refuses nothing.
    let strict = job("pivot: {on_collision: error}\n");
    let got =
        columns_of_unplanned(&strict, &MariaDb, &shape, &existing, &unplanned[..1]).expect("named");
    assert!(got[0].starts_with("a~"), "{got:?}");
}

#[test]
fn the_target_databases_classes_decide_which_names_are_one_identifier() {
    let j = job("");
    let attrs: Vec<String> = ["ß", "ss", "Ａ", "A", "Color", "color"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // As a collation might have it: ß is ss, Ａ is A, and (case-sensitive) Color is not color.
    let classes: HashMap<String, u64> = [
        ("ID", 0),
        ("ß", 1),
        ("ss", 1),
        ("Ａ", 2),
        ("A", 2),
        ("Color", 3),
        ("color", 4),
    ]
    .iter()
    .map(|(n, c)| (n.to_string(), *c))
    .collect();
    let (columns, renamed) = name_columns_in(&j, &MsSql, &attrs, Some(&classes)).expect("named");
    let columns: Vec<&str> = columns.iter().map(|c| c.column.as_str()).collect();
    assert_eq!(columns[0], "ß");
    assert!(columns[1].starts_with("ss~"), "{columns:?}");
    assert_eq!(columns[2], "Ａ");
    assert!(columns[3].starts_with("A~"), "{columns:?}");
    assert_eq!(&columns[4..], ["Color", "color"]);
    assert!(
        renamed.iter().all(|r| r.reason.contains("collation")),
        "{renamed:?}"
    );
    // Without the classes, the dialect's key: only case is folded.
    assert_eq!(names(&j, &MsSql, &["ß", "ss"]), ["ß", "ss"]);
    // The names asked about: entity columns and natural names, once each.
    let discovered: Vec<crate::plan::Discovered> = ["b", "a", "b"]
        .iter()
        .map(|n| crate::plan::Discovered {
            name: n.to_string(),
            rows: 1,
            values: 1,
            widths: None,
        })
        .collect();
    assert_eq!(
        natural_column_names(&j, &MsSql, &discovered),
        ["ID", "a", "b"]
    );
    let rows = vec![vec![Value::Int(1), Value::Int(7)]];
    let names = ["x".to_string(), "y".to_string()];
    assert_eq!(classes_by_name(&names, &rows).expect("rows")["y"], 7);
    assert!(classes_by_name(&names, &[vec![Value::Int(2), Value::Int(1)]]).is_err());
}
