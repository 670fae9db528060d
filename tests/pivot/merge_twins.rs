//! A merge never puts one attribute's values into another attribute's column: `Color` merged
//! into a target whose `color` holds attribute `color` gets its own column (`Color~hash` where
//! the database compares identifiers case-insensitively, SQLite and MariaDB; `Color` on
//! PostgreSQL), named in `--json` `columns`; and a target built with both keeps each in its
//! own column on later merges. Both strategies.

use crate::servers;

use std::collections::BTreeMap;

use eavpivot::backend::Backend;
use servers::*;

/// entity id → column → value, NULLs left out.
type Wide = BTreeMap<String, BTreeMap<String, String>>;

async fn read_wide(db: &mut dyn Backend, what: &str, table: &str) -> Wide {
    read_keyed(db, what, table, 1)
        .await
        .into_iter()
        .map(|(key, cells)| (key[0].as_text().unwrap_or_default(), cells))
        .collect()
}

async fn load(db: &mut dyn Backend, source: &str, rows: &str) {
    for sql in [
        format!("DELETE FROM {source}"),
        format!("INSERT INTO {source} (id, attr, val) VALUES {rows}"),
    ] {
        db.execute(&sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Runs the job; returns the `--json` attribute → column map.
fn run_job(
    db: &Db,
    dir: &std::path::Path,
    p: &str,
    if_exists: &str,
    strategy: &str,
) -> BTreeMap<String, String> {
    let path = dir.join(format!("{p}_{if_exists}.yaml"));
    std::fs::write(
        &path,
        format!(
            "name: {p}\nsource: {{table: {p}_src, alias: s}}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {p}_wide, if_exists: {if_exists}}}\n"
        ),
    )
    .expect("write job");
    let out = run(
        &[
            "run",
            &path.display().to_string(),
            "--strategy",
            strategy,
            "--json",
        ],
        &db.url,
    );
    assert!(
        out.status.success(),
        "{} {strategy} {if_exists}: {}",
        db.what,
        stderr(&out)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json report");
    json["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| {
            (
                c["attribute"].as_str().unwrap_or_default().to_string(),
                c["column"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn row(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(c, v)| (c.to_string(), v.to_string()))
        .collect()
}

async fn twins(db: Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    // `Color`'s column beside `color` (a case-insensitive database disambiguates it).
    let twin = |map: &BTreeMap<String, String>| map.get("Color").cloned().expect("Color's column");
    for strategy in ["pushdown", "stream"] {
        let p = format!("twin{}_{strategy}_{}", std::process::id(), db.what);
        let (source, target) = (format!("{p}_src"), format!("{p}_wide"));
        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
        let create =
            format!("CREATE TABLE {source} (id INT NOT NULL, attr VARCHAR(20), val VARCHAR(20))");
        conn.execute(&create).await.expect("create source");

        // (a) the target has `color`; the merge brings `Color`.
        load(conn.as_mut(), &source, "(1, 'color', 'p1')").await;
        run_job(&db, dir.path(), &p, "replace", strategy);
        load(
            conn.as_mut(),
            &source,
            "(1, 'color', 'p1'), (2, 'Color', '[x]')",
        )
        .await;
        let map = run_job(&db, dir.path(), &p, "merge", strategy);
        let color_2 = twin(&map);
        assert_eq!(
            map.get("color").map(String::as_str),
            Some("color"),
            "{} {strategy}: {map:?}",
            db.what
        );
        assert_ne!(
            color_2, "color",
            "{} {strategy}: Color must not share color's column",
            db.what
        );
        let expected: Wide = [
            ("1".to_string(), row(&[("color", "p1")])),
            ("2".to_string(), row(&[(color_2.as_str(), "[x]")])),
        ]
        .into();
        assert_eq!(
            read_wide(conn.as_mut(), db.what, &target).await,
            expected,
            "{} {strategy}: (a)",
            db.what
        );
        // Merged again, each attribute changed: each to its own column.
        load(
            conn.as_mut(),
            &source,
            "(1, 'color', 'p2'), (2, 'Color', '[y]')",
        )
        .await;
        let again = run_job(&db, dir.path(), &p, "merge", strategy);
        assert_eq!(again, map, "{} {strategy}: the same columns again", db.what);
        let expected: Wide = [
            ("1".to_string(), row(&[("color", "p2")])),
            ("2".to_string(), row(&[(color_2.as_str(), "[y]")])),
        ]
        .into();
        assert_eq!(
            read_wide(conn.as_mut(), db.what, &target).await,
            expected,
            "{} {strategy}: (a) again",
            db.what
        );

        // (b) `color` and `Color` loaded together, then a change of each merged.
        drop_if_exists(conn.as_mut(), &target).await;
        load(
            conn.as_mut(),
            &source,
            "(1, 'color', 'p1'), (1, 'Color', '[x]')",
        )
        .await;
        let built = run_job(&db, dir.path(), &p, "replace", strategy);
        load(
            conn.as_mut(),
            &source,
            "(1, 'color', 'p2'), (1, 'Color', '[y]')",
        )
        .await;
        let merged = run_job(&db, dir.path(), &p, "merge", strategy);
        assert_eq!(
            merged, built,
            "{} {strategy}: (b) the columns as built",
            db.what
        );
        let expected: Wide = [(
            "1".to_string(),
            row(&[
                (built["color"].as_str(), "p2"),
                (built["Color"].as_str(), "[y]"),
            ]),
        )]
        .into();
        assert_eq!(
            read_wide(conn.as_mut(), db.what, &target).await,
            expected,
            "{} {strategy}: (b)",
            db.what
        );
        // Only `Color` changes: it still finds its own column, `color` is not touched.
        load(
            conn.as_mut(),
            &source,
            "(1, 'color', 'p2'), (1, 'Color', '[z]')",
        )
        .await;
        run_job(&db, dir.path(), &p, "merge", strategy);
        let expected: Wide = [(
            "1".to_string(),
            row(&[
                (built["color"].as_str(), "p2"),
                (built["Color"].as_str(), "[z]"),
            ]),
        )]
        .into();
        assert_eq!(
            read_wide(conn.as_mut(), db.what, &target).await,
            expected,
            "{} {strategy}: (b) again",
            db.what
        );

        for t in [&source, &target] {
            drop_if_exists(conn.as_mut(), t).await;
        }
    }
}

#[tokio::test]
async fn sqlite_merge_keeps_case_twins_apart() {
    twins(sqlite()).await;
}

#[tokio::test]
async fn postgres_merge_keeps_case_twins_apart() {
    twins(postgres()).await;
}

#[tokio::test]
async fn mariadb_merge_keeps_case_twins_apart() {
    twins(mariadb()).await;
}

/// Babelfish's `sys.columns` lists names lower-cased, so the merge could not tell the
/// target's `color` (attribute `color`) from `Color`'s own column and put `Color`'s values
/// into it, over `color`'s (found by a differential named case).
#[tokio::test]
async fn mssql_merge_keeps_case_twins_apart() {
    if let Some(db) = mssql() {
        twins(db).await;
    }
}

/// Under `pivot.on_collision: error` the twin is refused before any write, naming it.
#[tokio::test]
async fn sqlite_merge_refuses_a_twin_under_on_collision_error() {
    let db = sqlite();
    let Some(mut conn) = db.open().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    conn.execute("CREATE TABLE tw_src (id INT NOT NULL, attr TEXT, val TEXT)")
        .await
        .expect("create source");
    load(conn.as_mut(), "tw_src", "(1, 'color', 'p1')").await;
    run_job(&db, dir.path(), "tw", "replace", "stream");
    load(conn.as_mut(), "tw_src", "(2, 'Color', '[x]')").await;
    let path = dir.path().join("error.yaml");
    std::fs::write(
        &path,
        "name: tw\nsource: {table: tw_src, alias: s}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\npivot: {on_collision: error}\ntarget: {table: tw_wide, if_exists: merge}\n",
    )
    .expect("write job");
    let out = run(&["run", &path.display().to_string()], &db.url);
    let err = stderr(&out);
    assert!(!out.status.success(), "refused: {err}");
    assert!(
        err.contains("'Color'") && err.contains("pivot.on_collision: error"),
        "names the attribute and the setting: {err}"
    );
    let before: Wide = [("1".to_string(), row(&[("color", "p1")]))].into();
    assert_eq!(read_wide(conn.as_mut(), "sqlite", "tw_wide").await, before);
}
