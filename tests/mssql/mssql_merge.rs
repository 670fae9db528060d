//! `if_exists: merge` and `replace` run twice on SQL Server (Babelfish in CI; any server at
//! `EAVPIVOT_MSSQL_URL`), both strategies, through the real binary, compared cell by cell —
//! and the same merge on SQLite and SQL Server into a target whose columns differ in case from
//! the attributes. Both catalogs keep case (SQL Server's through `INFORMATION_SCHEMA.COLUMNS`:
//! Babelfish's `sys.columns` lower-cases names), so `COLOR` is not attribute `Color`'s column
//! (it may be another attribute's: tests/pivot/merge_twins.rs) and `Color` gets a column of its
//! own. Until Babelfish's lower-cased names were read through the view, SQL Server matched them
//! case-blind, and so put `Color` into the column of a `color` attribute.

use crate::servers;

use eavpivot::backend::Backend;
use servers::*;

/// entity → (COLOR, SIZE), as text.
type Cells = Vec<(i64, Option<String>, Option<String>)>;

fn job(dir: &std::path::Path, source: &str, target: &str, if_exists: &str) -> String {
    let path = dir.join(format!("{target}_{if_exists}.yaml"));
    std::fs::write(
        &path,
        format!(
            "name: mssql_merge\nsource: {{table: {source}, alias: s}}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: {if_exists}}}\n"
        ),
    )
    .expect("write job");
    path.display().to_string()
}

async fn cells(db: &mut dyn Backend, target: &str) -> Cells {
    db.query(&format!("SELECT id, COLOR, SIZE FROM {target} ORDER BY id"))
        .await
        .unwrap_or_else(|e| panic!("reading {target}: {e}"))
        .into_iter()
        .map(|r| {
            (
                r[0].as_i64().expect("integer id"),
                r[1].as_text(),
                r[2].as_text(),
            )
        })
        .collect()
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// The `--json` report of a run that must have succeeded.
fn report(out: &std::process::Output, what: &str) -> serde_json::Value {
    assert!(out.status.success(), "{what}: {}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("--json report")
}

/// Source: 1 Color=Red Size=M, 2 Color=Blue. Target before the merge: `id`, `COLOR`, `SIZE`
/// (upper case), holding entity 2 (stale) and 3. After: 1 and 2 from the source, 3 kept, the
/// target's `COLOR` and `SIZE` as `expected`. Returns the `--json` column map.
async fn merge_into_upper_case_columns(
    db: &Db,
    text: &str,
    expected: &Cells,
) -> Vec<Vec<(String, String)>> {
    let mut maps = Vec::new();
    let rt_db = db.open().await;
    let Some(mut conn) = rt_db else { return maps };
    let tag = format!("bbf_m{}_{}", std::process::id(), db.what);
    let dir = tempfile::tempdir().expect("temp dir");
    for strategy in ["pushdown", "stream"] {
        let source = format!("{tag}_{strategy}_src");
        let target = format!("{tag}_{strategy}_wide");
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
        let setup = [
            format!("CREATE TABLE {source} (id INT NOT NULL, attr {text}, val {text})"),
            format!("INSERT INTO {source} (id, attr, val) VALUES (1, 'Color', 'Red'), (1, 'Size', 'M'), (2, 'Color', 'Blue')"),
            format!("CREATE TABLE {target} (id INT NOT NULL PRIMARY KEY, COLOR {text}, SIZE {text})"),
            format!("INSERT INTO {target} (id, COLOR, SIZE) VALUES (2, 'Old', 'S'), (3, 'Green', 'L')"),
        ];
        for sql in &setup {
            conn.execute(sql)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let merge = job(dir.path(), &source, &target, "merge");
        let out = run(&["run", &merge, "--strategy", strategy, "--json"], &db.url);
        assert!(
            out.status.success(),
            "{} {strategy}: merge into upper-case columns failed: {}",
            db.what,
            stderr(&out)
        );
        assert_eq!(
            &cells(conn.as_mut(), &target).await,
            expected,
            "{} {strategy}: merged cells",
            db.what
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json");
        let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        let map = json["columns"].as_array().expect("columns").iter();
        maps.push(
            map.map(|c| (text(&c["attribute"]), text(&c["column"])))
                .collect(),
        );
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
    }
    maps
}

/// The job run twice with `replace` (the second swaps a new table in by rename), then merged
/// once more: the same cells each time.
/// `long`: the target is named in 60 bytes, and its staging names must still be ones the
/// server renames.
async fn replace_twice_then_merge(db: &Db, text: &str, long: bool) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let tag = format!("bbf_r{}_{}{}", std::process::id(), db.what, long as u8);
    let dir = tempfile::tempdir().expect("temp dir");
    for strategy in ["pushdown", "stream"] {
        let source = format!("{tag}_{strategy}_src");
        let mut target = format!("{tag}_{strategy}_wide");
        if long {
            target.push_str(&"_".repeat(60 - target.len()));
        }
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
        execute_all(
            conn.as_mut(),
            &[
            format!("CREATE TABLE {source} (id INT NOT NULL, attr {text}, val {text})"),
            format!("INSERT INTO {source} (id, attr, val) VALUES (1, 'Color', 'Red'), (1, 'Size', 'M'), (2, 'Color', 'Blue')"),
            ],
        )
        .await;
        let want = [(1, some("Red"), some("M")), (2, some("Blue"), None)];
        let replace = job(dir.path(), &source, &target, "replace");
        let merge = job(dir.path(), &source, &target, "merge");
        for (what, path) in [
            ("replace", &replace),
            ("replace again", &replace),
            ("merge", &merge),
        ] {
            let out = run(&["run", path, "--strategy", strategy, "--json"], &db.url);
            assert!(
                out.status.success(),
                "{} {strategy} {what}: {}",
                db.what,
                stderr(&out)
            );
            assert_eq!(
                cells(conn.as_mut(), &target).await,
                want,
                "{} {strategy} after {what}",
                db.what
            );
        }
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
    }
}

/// `COLOR` and `SIZE` are left as they were for entities 1 and 2 (NULL: the merge sets
/// every existing column of a merged entity), and `Color` and `Size` get columns of their own.
async fn merge_keeps_apart_columns_whose_case_differs(db: &Db, text: &str) {
    let untouched = (3, some("Green"), some("L"));
    let expected = vec![(1, None, None), (2, None, None), untouched];
    let maps = merge_into_upper_case_columns(db, text, &expected).await;
    assert_eq!(maps.len(), 2, "{}: both strategies ran", db.what);
    for map in maps {
        let named: Vec<bool> = map
            .iter()
            .map(|(a, c)| c.starts_with(&format!("{a}~")))
            .collect();
        assert_eq!(
            named,
            [true, true],
            "{}: Color and Size in columns of their own: {map:?}",
            db.what
        );
    }
}

#[tokio::test]
async fn sqlite_merge_keeps_apart_columns_whose_case_differs() {
    merge_keeps_apart_columns_whose_case_differs(&sqlite(), "TEXT").await;
}

#[tokio::test]
async fn mssql_merge_keeps_apart_columns_whose_case_differs() {
    let Some(db) = mssql() else { return };
    merge_keeps_apart_columns_whose_case_differs(&db, "NVARCHAR(100)").await;
}

#[tokio::test]
async fn mssql_replace_twice_then_merge() {
    let Some(db) = mssql() else { return };
    replace_twice_then_merge(&db, "NVARCHAR(100)", false).await;
}

/// A merge writes only the entities whose row changes: an AFTER UPDATE trigger logs every
/// row written. Entity 1 loses its Size and entity 2 gains one (a cell going to and from
/// NULL, which SQL Server's `=` compares as unknown, not as a difference), entity 3 stays;
/// a second merge of the same source writes nothing.
#[tokio::test]
async fn mssql_a_merge_rewrites_only_the_entities_that_changed() {
    let Some(db) = mssql() else { return };
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c = conn.as_mut();
    let tag = format!("bbf_u{}", std::process::id());
    let dir = tempfile::tempdir().expect("temp dir");
    for strategy in ["pushdown", "stream"] {
        let (source, target, log) = (
            format!("{tag}_{strategy}_src"),
            format!("{tag}_{strategy}_wide"),
            format!("{tag}_{strategy}_log"),
        );
        for t in [&source, &target, &log] {
            drop_if_exists(c, t).await;
        }
        execute_all(
            c,
            &[
                format!("CREATE TABLE {source} (id INT NOT NULL, attr NVARCHAR(100), val NVARCHAR(100))"),
                format!("INSERT INTO {source} (id, attr, val) VALUES (1, 'Color', 'Red'), (1, 'Size', 'M'), (2, 'Color', 'Blue'), (3, 'Color', 'Green')"),
            ],
        )
        .await;
        let run_json = |path: &str| {
            let out = run(&["run", path, "--strategy", strategy, "--json"], &db.url);
            report(&out, strategy)
        };
        run_json(&job(dir.path(), &source, &target, "replace"));
        execute_all(
            c,
            &[
                format!("CREATE TABLE {log} (id INT)"),
                format!("CREATE TRIGGER {tag}_{strategy}_trg ON {target} AFTER UPDATE AS INSERT INTO {log} (id) SELECT id FROM inserted"),
                format!("DELETE FROM {source} WHERE id = 1 AND attr = 'Size'"),
                format!("INSERT INTO {source} (id, attr, val) VALUES (2, 'Size', 'S')"),
            ],
        )
        .await;
        let merge = job(dir.path(), &source, &target, "merge");
        for (round, updated, unchanged, written) in [(1, 2, 1, vec![1, 2]), (2, 0, 3, vec![1, 2])] {
            let report = run_json(&merge);
            let m = &report["merged"][0];
            assert_eq!(
                (m["updated"].as_u64(), m["unchanged"].as_u64()),
                (Some(updated), Some(unchanged)),
                "{strategy} merge {round}: {report}"
            );
            assert_eq!(
                cells(c, &target).await,
                [
                    (1, some("Red"), None),
                    (2, some("Blue"), some("S")),
                    (3, some("Green"), None)
                ],
                "{strategy} merge {round}"
            );
            let rows = c
                .query(&format!("SELECT id FROM {log} ORDER BY id"))
                .await
                .expect("log");
            let logged: Vec<i64> = rows.iter().filter_map(|r| r[0].as_i64()).collect();
            assert_eq!(logged, written, "{strategy} merge {round}: rows written");
        }
        for t in [&source, &target, &log] {
            drop_if_exists(c, t).await;
        }
    }
}

/// `replace` over a target the user has built on: an index and a trigger, which go with the
/// replaced table, are named in a plan note; another table's foreign key to it, which would
/// fail the DROP of the replaced table after the whole load, is refused first (exit 2, the
/// target as it was). A view (not schema-bound) reads the table swapped in by its name.
#[tokio::test]
async fn mssql_replace_names_what_it_leaves_and_refuses_what_blocks_it() {
    let Some(db) = mssql() else { return };
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c = conn.as_mut();
    let p = format!("bbf_rdep{}", std::process::id());
    let (source, target, child, view) = (
        format!("{p}_src"),
        format!("{p}_wide"),
        format!("{p}_child"),
        format!("{p}_view"),
    );
    let cleanup = [
        format!("DROP VIEW IF EXISTS {view}"),
        format!("DROP TABLE IF EXISTS {child}"),
    ];
    execute_all(c, &cleanup).await;
    for t in [&source, &target] {
        drop_if_exists(c, t).await;
    }
    execute_all(
        c,
        &[
            format!("CREATE TABLE {source} (id INT NOT NULL, attr NVARCHAR(100), val NVARCHAR(100))"),
            format!("INSERT INTO {source} (id, attr, val) VALUES (1, 'Color', 'Red'), (1, 'Size', 'M'), (2, 'Color', 'Blue')"),
        ],
    )
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let replace = job(dir.path(), &source, &target, "replace");
    let run_replace = || run(&["run", &replace, "--json"], &db.url);
    let out = run_replace();
    assert!(out.status.success(), "{}", stderr(&out));
    execute_all(
        c,
        &[
            format!("CREATE INDEX {p}_x ON {target} (Color)"),
            format!("CREATE TRIGGER {p}_trg ON {target} AFTER UPDATE AS SELECT 1"),
        ],
    )
    .await;
    let notes = report(&run_replace(), "replace")["notes"].to_string();
    // Babelfish lists an index under its own longer name, which starts with the given one.
    for what in [format!("index {p}_x"), format!("trigger {p}_trg")] {
        assert!(notes.contains(&what), "{what} not in {notes}");
    }
    execute_all(
        c,
        &[
            format!("CREATE TABLE {child} (id INT REFERENCES {target} (id))"),
            format!("INSERT INTO {child} VALUES (2)"),
            format!("UPDATE {source} SET val = 'Black' WHERE id = 2"),
        ],
    )
    .await;
    let before = cells(c, &target).await;
    let out = run_replace();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!("cannot replace {target}")) && said.contains(&child),
        "{said}"
    );
    assert_eq!(cells(c, &target).await, before);
    execute_all(c, &[format!("DROP TABLE {child}")]).await;
    execute_all(
        c,
        &[format!(
            "CREATE VIEW {view} AS SELECT id, Color FROM {target}"
        )],
    )
    .await;
    let out = run_replace();
    if is_babelfish(c).await {
        // Babelfish binds a view to the table as PostgreSQL does, and lists it in no catalog
        // view eavpivot can read: the swap's DROP fails after the load, rolled back.
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("nothing was written"),
            "{}",
            stderr(&out)
        );
        assert_eq!(cells(c, &target).await, before);
        known_babelfish_gap(
            "replace under a view",
            "a view over the target blocks the DROP of the replaced table, unlisted in sys.sql_expression_dependencies",
        );
    } else {
        assert!(out.status.success(), "{}", stderr(&out));
        let rows = c
            .query(&format!("SELECT Color FROM {view} WHERE id = 2"))
            .await
            .expect("view");
        assert_eq!(rows[0][0].as_text().as_deref(), Some("Black"));
    }
    execute_all(c, &cleanup).await;
    for t in [&source, &target] {
        drop_if_exists(c, t).await;
    }
}

/// A target named in 60 bytes, under Babelfish's 63, whose staging names (`…__eavpivot_…`)
/// would be over it: Babelfish shortens those, and `sp_rename` then found no such table.
#[tokio::test]
async fn mssql_replace_twice_then_merge_a_long_named_target() {
    let Some(db) = mssql() else { return };
    replace_twice_then_merge(&db, "NVARCHAR(100)", true).await;
}

/// A text entity key keeps its declared length: Babelfish describes an `NVARCHAR(20)` column
/// as `nvarchar` (length only in `max_length`), and a bare `NVARCHAR` would be one character.
#[tokio::test]
async fn mssql_text_entity_keys_keep_their_length() {
    let Some(db) = mssql() else { return };
    let Some(mut conn) = db.open().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let source = format!("bbf_k{}_src", std::process::id());
    let target = format!("bbf_k{}_wide", std::process::id());
    for t in [&source, &target] {
        drop_if_exists(conn.as_mut(), t).await;
    }
    execute_all(
        conn.as_mut(),
        &[
        format!("CREATE TABLE {source} (sku NVARCHAR(20) NOT NULL, attr NVARCHAR(20), val NVARCHAR(20))"),
        format!("INSERT INTO {source} VALUES (N'item-0001', N'Color', N'Red'), (N'item-0002', N'Color', N'Blue')"),
        ],
    )
    .await;
    let path = dir.path().join("keys.yaml");
    std::fs::write(
        &path,
        format!("name: keys\nsource: {{table: {source}, alias: s}}\nentity: [s.sku]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: replace}}\n"),
    )
    .expect("write job");
    for strategy in ["pushdown", "stream"] {
        let out = run(
            &["run", path.to_str().expect("path"), "--strategy", strategy],
            &db.url,
        );
        assert!(out.status.success(), "{strategy}: {}", stderr(&out));
        let keys = names(
            conn.as_mut(),
            &format!("SELECT sku FROM {target} ORDER BY sku"),
        )
        .await;
        assert_eq!(keys, ["item-0001", "item-0002"], "{strategy}");
    }
    for t in [&source, &target] {
        drop_if_exists(conn.as_mut(), t).await;
    }
}

/// Attribute names over 63 bytes (Babelfish keeps identifiers that long under a shortened
/// name with an MD5 suffix): a replace, then a merge that changes one cell, adds an entity
/// and no longer has one attribute, must find the long columns by their names (before the
/// names were read from `bbf_original_name`, it failed adding `Colour_x…` again).
#[tokio::test]
async fn mssql_merge_finds_columns_named_over_63_bytes() {
    let Some(db) = mssql() else { return };
    let Some(mut conn) = db.open().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let long_ascii = format!("Colour_{}", "x".repeat(70));
    let long_accents = "é".repeat(40); // 40 characters, 80 bytes in UTF-8
    let gone = format!("Gone {}", "z".repeat(70)); // in the target, not in the merge's source
    for strategy in ["pushdown", "stream"] {
        let source = format!("bbf_l{}_{strategy}_src", std::process::id());
        let target = format!("bbf_l{}_{strategy}_wide", std::process::id());
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
        execute_all(
            conn.as_mut(),
            &[
            format!("CREATE TABLE {source} (id INT NOT NULL, attr NVARCHAR(200), val NVARCHAR(20))"),
            format!("INSERT INTO {source} VALUES (1, N'{long_ascii}', N'Red'), (1, N'{long_accents}', N'M'), (2, N'{long_ascii}', N'Blue'), (2, N'{gone}', N'x')"),
            ],
        )
        .await;
        let replace = job(dir.path(), &source, &target, "replace");
        let merge = job(dir.path(), &source, &target, "merge");
        let out = run(&["run", &replace, "--strategy", strategy], &db.url);
        assert!(out.status.success(), "{strategy} replace: {}", stderr(&out));
        execute_all(
            conn.as_mut(),
            &[
                format!("UPDATE {source} SET val = N'Green' WHERE id = 2"),
                format!("INSERT INTO {source} VALUES (3, N'{long_accents}', N'L')"),
                format!("DELETE FROM {source} WHERE attr = N'{gone}'"),
            ],
        )
        .await;
        let out = run(&["run", &merge, "--strategy", strategy, "--json"], &db.url);
        assert!(out.status.success(), "{strategy} merge: {}", stderr(&out));
        let rows = db_rows(
            conn.as_mut(),
            &format!("SELECT * FROM {target} ORDER BY id"),
        )
        .await;
        assert_eq!(
            rows,
            [
                vec![some("1"), some("Red"), None, some("M")],
                vec![some("2"), some("Green"), None, None],
                vec![some("3"), None, None, some("L")],
            ],
            "{strategy}: cells after the merge (id, Colour…, Gone…, é…)"
        );
        let names = db_rows(
            conn.as_mut(),
            &format!("SELECT CAST(COLUMN_NAME AS NVARCHAR(128)) FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = '{target}'"),
        )
        .await;
        assert_eq!(
            names.len(),
            4,
            "{strategy}: no column added by the merge: {names:?}"
        );
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
    }
}

async fn db_rows(db: &mut dyn Backend, sql: &str) -> Vec<Vec<Option<String>>> {
    db.query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .map(|r| r.iter().map(|v| v.as_text()).collect())
        .collect()
}

/// A user-made fixed-width column (`NCHAR(5)`) holds `M` as `M    `. The first merge widens
/// it to the run's text type, which keeps the padding, and writes `M`: both rows really
/// change (as a `replace` would write them). Merging the same values again changes nothing
/// and says so (`updated` 0), on both strategies: padded cells are not counted as updated
/// on every merge.
#[tokio::test]
async fn mssql_merge_into_fixed_width_columns_counts_no_change() {
    let Some(db) = mssql() else { return };
    let Some(mut conn) = db.open().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    for strategy in ["pushdown", "stream"] {
        let source = format!("bbf_c{}_{strategy}_src", std::process::id());
        let target = format!("bbf_c{}_{strategy}_wide", std::process::id());
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
        execute_all(
            conn.as_mut(),
            &[
                format!(
                    "CREATE TABLE {source} (id INT NOT NULL, attr NVARCHAR(20), val NVARCHAR(20))"
                ),
                format!("INSERT INTO {source} VALUES (1, N'Size', N'M'), (2, N'Size', N'L')"),
                format!("CREATE TABLE {target} (id INT NOT NULL PRIMARY KEY, Size NCHAR(5))"),
                format!("INSERT INTO {target} VALUES (1, N'M'), (2, N'S')"),
            ],
        )
        .await;
        let merge = job(dir.path(), &source, &target, "merge");
        for (round, updated, unchanged) in [(1, 2, 0), (2, 0, 2)] {
            let out = run(&["run", &merge, "--strategy", strategy, "--json"], &db.url);
            assert!(
                out.status.success(),
                "{strategy} merge {round}: {}",
                stderr(&out)
            );
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json");
            let merged = &json["merged"][0];
            assert_eq!(
                (merged["updated"].as_u64(), merged["unchanged"].as_u64()),
                (Some(updated), Some(unchanged)),
                "{strategy} merge {round}: {merged}"
            );
            let rows = db_rows(
                conn.as_mut(),
                &format!("SELECT id, Size FROM {target} ORDER BY id"),
            )
            .await;
            let want = [[some("1"), some("M")], [some("2"), some("L")]];
            assert_eq!(rows, want.map(Vec::from), "{strategy} merge {round}: cells");
        }
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
    }
}

/// The catalog's names and types stay with their columns when a column was dropped (its
/// `column_id` left as a gap) and a long-named one added after it: on Babelfish the name as
/// created is joined to `sys.columns` by that id.
#[tokio::test]
async fn mssql_catalog_names_follow_their_columns_after_a_drop() {
    use eavpivot::dialect::Catalog;
    let Some(db) = mssql() else { return };
    let Some(mut conn) = db.open().await else {
        return;
    };
    let table = format!("bbf_d{}_wide", std::process::id());
    let long = format!("Long {}", "n".repeat(70));
    drop_if_exists(conn.as_mut(), &table).await;
    execute_all(
        conn.as_mut(),
        &[
            format!("CREATE TABLE {table} (id INT, a NVARCHAR(3), b DATE, c BIGINT)"),
            format!("ALTER TABLE {table} DROP COLUMN b"),
            format!("ALTER TABLE {table} ADD [{long}] DATE"),
        ],
    )
    .await;
    let target = eavpivot::table_ref::TableRef::parse(&table).expect("table name");
    let listed = db_rows(
        conn.as_mut(),
        &eavpivot::dialect::MsSql.column_types(&target),
    )
    .await;
    // Names and types (the third column, what a widening restates, has its own tests).
    let listed: Vec<_> = listed.iter().map(|r| r[..2].to_vec()).collect();
    let want = [
        ["id", "int"],
        ["a", "nvarchar(3)"],
        ["c", "bigint"],
        [long.as_str(), "date"],
    ]
    .map(|r| r.map(some).to_vec());
    assert_eq!(listed, want, "names and types of {table}");
    drop_if_exists(conn.as_mut(), &table).await;
}

/// The catalog's two branches agree: on Babelfish the batch reads names as created (from
/// `bbf_original_name`), and its `ELSE` branch — the query SQL Server runs, which no server
/// here would otherwise run — must list the same names and types for names under 63 bytes.
/// A column renamed by `sp_rename` is listed by its new name.
#[tokio::test]
async fn mssql_catalog_branches_agree_and_follow_a_rename() {
    use eavpivot::dialect::Catalog;
    let Some(db) = mssql() else { return };
    let Some(mut conn) = db.open().await else {
        return;
    };
    let table = format!("bbf_b{}_wide", std::process::id());
    drop_if_exists(conn.as_mut(), &table).await;
    execute_all(
        conn.as_mut(),
        &[
        format!("CREATE TABLE {table} (id INT, [Mixed Case] NVARCHAR(7), [it's] DECIMAL(5,2), [☃ snow] DATE, Color NVARCHAR(5))"),
        format!("EXEC sp_rename N'{table}.Color', N'Colour', N'COLUMN'"),
        ],
    )
    .await;
    let target = eavpivot::table_ref::TableRef::parse(&table).expect("table name");
    let d = eavpivot::dialect::MsSql;
    for (what, batch) in [
        ("column types", d.column_types(&target)),
        ("table columns", d.table_columns(&target)),
    ] {
        let (_, sql_server) = batch
            .split_once("' ELSE SELECT ")
            .unwrap_or_else(|| panic!("{what}: no ELSE branch in {batch}"));
        let whole = db_rows(conn.as_mut(), &batch).await;
        let branch = db_rows(conn.as_mut(), &format!("SELECT {sql_server}")).await;
        assert_eq!(
            whole, branch,
            "{what}: the SQL Server branch lists otherwise"
        );
        let names: Vec<Option<String>> = whole.iter().map(|r| r[0].clone()).collect();
        let want = ["id", "Mixed Case", "it's", "☃ snow", "Colour"].map(some);
        assert_eq!(names, want, "{what}");
    }
    drop_if_exists(conn.as_mut(), &table).await;
}

/// A user's target with columns of an alias type (`CREATE TYPE … FROM NVARCHAR(10)`) and of
/// `sysname`: the catalog gives their base types, so a merge compares them like any
/// NVARCHAR (it refused them by the alias's own name: "not one eavpivot can widen").
#[tokio::test]
async fn mssql_merge_into_alias_typed_columns() {
    use eavpivot::dialect::Catalog;
    let Some(db) = mssql() else { return };
    let Some(mut conn) = db.open().await else {
        return;
    };
    let p = format!("bbf_a{}", std::process::id());
    let alias = format!("{p}_name");
    let dir = tempfile::tempdir().expect("temp dir");
    for strategy in ["pushdown", "stream"] {
        let (source, target) = (
            format!("{p}_{strategy}_src"),
            format!("{p}_{strategy}_wide"),
        );
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
        let _ = conn.execute(&format!("DROP TYPE IF EXISTS {alias}")).await;
        execute_all(
            conn.as_mut(),
            &[
            format!("CREATE TYPE {alias} FROM NVARCHAR(10)"),
            format!("CREATE TABLE {source} (id INT NOT NULL, attr NVARCHAR(20), val NVARCHAR(20))"),
            format!("INSERT INTO {source} VALUES (1, N'Name', N'Ann'), (1, N'Tag', N'x'), (2, N'Name', N'Bo')"),
            format!("CREATE TABLE {target} (id INT NOT NULL PRIMARY KEY, Name {alias}, Tag SYSNAME NULL)"),
            format!("INSERT INTO {target} VALUES (1, N'Old', N'y'), (3, N'Cy', NULL)"),
            ],
        )
        .await;
        let t = eavpivot::table_ref::TableRef::parse(&target).expect("table name");
        let types = db_rows(conn.as_mut(), &eavpivot::dialect::MsSql.column_types(&t)).await;
        let types: Vec<Option<String>> = types.iter().map(|r| r[1].clone()).collect();
        // SQL Server lists sysname as nvarchar(128); Babelfish by its own name, which the
        // merge reads as the same kind.
        assert_eq!(
            types[..2],
            ["int", "nvarchar(10)"].map(some),
            "{strategy}: base types"
        );
        assert!(
            matches!(types[2].as_deref(), Some("nvarchar(128)" | "sysname")),
            "{strategy}: {types:?}"
        );
        let merge = job(dir.path(), &source, &target, "merge");
        let out = run(&["run", &merge, "--strategy", strategy], &db.url);
        assert!(out.status.success(), "{strategy}: {}", stderr(&out));
        let rows = db_rows(
            conn.as_mut(),
            &format!("SELECT id, Name, Tag FROM {target} ORDER BY id"),
        )
        .await;
        let want = [
            [some("1"), some("Ann"), some("x")],
            [some("2"), some("Bo"), None],
            [some("3"), some("Cy"), None],
        ];
        assert_eq!(rows, want.map(Vec::from), "{strategy}: cells");
        // The values fit: the user's columns keep their types.
        let after = db_rows(conn.as_mut(), &eavpivot::dialect::MsSql.column_types(&t)).await;
        let after: Vec<Option<String>> = after.iter().map(|r| r[1].clone()).collect();
        assert_eq!(after, types, "{strategy}: types after the merge");
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
        let _ = conn.execute(&format!("DROP TYPE IF EXISTS {alias}")).await;
    }
}

/// A merge into a split target on SQL Server: each attribute keeps its table, a new one goes
/// to the last, an overflow is refused ([`crate::merge_split_case`]). One test per strategy,
/// so that they run side by side (a Babelfish run takes seconds).
#[tokio::test]
async fn mssql_merges_into_split_targets_by_pushdown() {
    let Some(db) = mssql() else { return };
    crate::merge_split_case::split_case(&db, "pushdown").await;
}

#[tokio::test]
async fn mssql_merges_into_split_targets_by_stream() {
    let Some(db) = mssql() else { return };
    crate::merge_split_case::split_case(&db, "stream").await;
}
