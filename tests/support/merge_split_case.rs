//! `if_exists: merge` into a target `split` spread over several tables, through the real
//! binary, both strategies: run by tests/pivot (SQLite, PostgreSQL, MariaDB) and tests/mssql.
//! Refused before; now each attribute keeps the table that has its column, an attribute new
//! to the target goes to the last table, and one that would overflow it (more than `split: N`
//! columns) is refused before any write, the tables as they were.

use crate::servers;

use eavpivot::backend::Backend;
use servers::*;

fn write_job(dir: &std::path::Path, source: &str, target: &str, split: &str) -> String {
    let path = dir.join(format!("merge_split_{split}.yaml"));
    std::fs::write(
        &path,
        format!(
            "name: merge_split\nsource: {{table: {source}, alias: s}}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\n\
             target: {{table: {target}, if_exists: merge, on_missing: delete, split: {split}}}\n"
        ),
    )
    .expect("write job");
    path.display().to_string()
}

fn cells(pairs: &[(&str, &str)]) -> Cells {
    pairs
        .iter()
        .map(|(c, v)| (c.to_string(), v.to_string()))
        .collect()
}

async fn columns_of(c: &mut dyn Backend, what: &str, table: &str) -> Vec<String> {
    let d = eavpivot::dialect::by_name(what).expect("dialect");
    let table = eavpivot::config::TableRef::parse(table).expect("table name");
    let mut columns = names(c, &d.table_columns(&table)).await;
    columns.retain(|n| n != "id");
    columns
}

/// The whole case on `db` with `strategy`: a split target built, merged, refused, merged.
pub async fn split_case(db: &Db, strategy: &str) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c: &mut dyn Backend = conn.as_mut();
    let prefix = format!("msp{}_{}_{strategy}", std::process::id(), db.what);
    let (source, target) = (format!("{prefix}_kv"), format!("{prefix}_wide"));
    let (second, third) = (format!("{target}_2"), format!("{target}_3"));
    let every = [&source, &target, &second, &third];
    for t in every {
        drop_if_exists(c, t).await;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write_job(dir.path(), &source, &target, "2");
    let run_job = |job: &str| run(&["run", job, "--strategy", strategy, "--json"], &db.url);
    execute_all(
        c,
        &[
            format!("CREATE TABLE {source} (id INT, attr VARCHAR(20), val VARCHAR(40))"),
            format!(
                "INSERT INTO {source} VALUES (1, 'a', '1a'), (1, 'b', '1b'), (1, 'c', '1c'), \
                 (2, 'a', '2a'), (2, 'c', '2c'), (3, 'b', '3b')"
            ),
        ],
    )
    .await;
    let first = run_job(&job);
    assert!(first.status.success(), "{}", stderr(&first));
    let what = format!("{} {strategy}", db.what);
    assert_eq!(columns_of(c, db.what, &target).await, ["a", "b"], "{what}");
    assert_eq!(columns_of(c, db.what, &second).await, ["c"], "{what}");

    // A changed value, a removed cell, a removed entity, a new one with a new attribute.
    execute_all(
        c,
        &[
            format!("DELETE FROM {source} WHERE id = 3 OR (id = 2 AND attr = 'c')"),
            format!("UPDATE {source} SET val = '1A' WHERE id = 1 AND attr = 'a'"),
            format!("INSERT INTO {source} VALUES (4, 'c', '4c'), (4, 'd', '4d')"),
        ],
    )
    .await;
    let out = run_job(&job);
    assert!(out.status.success(), "{what}: {}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json report");
    let what = format!("{what}: {report}");
    assert_eq!(columns_of(c, db.what, &target).await, ["a", "b"], "{what}");
    assert_eq!(columns_of(c, db.what, &second).await, ["c", "d"], "{what}");
    let d = eavpivot::dialect::by_name(db.what).expect("dialect");
    let exists = d.table_exists(&eavpivot::config::TableRef::parse(&third).expect("name"));
    assert_eq!(
        text_rows(c, &exists).await,
        [["0"]],
        "{what}: no third table"
    );
    let wide = read_table(c, db.what, &target).await;
    let expected_wide = [
        (1, cells(&[("a", "1A"), ("b", "1b")])),
        (2, cells(&[("a", "2a")])),
        (4, cells(&[])),
    ];
    assert_eq!(wide, expected_wide.into_iter().collect(), "{what}");
    let wide_2 = read_table(c, db.what, &second).await;
    let expected_2 = [
        (1, cells(&[("c", "1c")])),
        (2, cells(&[])),
        (4, cells(&[("c", "4c"), ("d", "4d")])),
    ];
    assert_eq!(wide_2, expected_2.into_iter().collect(), "{what}");
    let merged: Vec<&str> = report["merged"]
        .as_array()
        .expect("merged")
        .iter()
        .filter_map(|m| m["table"].as_str())
        .collect();
    assert_eq!(merged.len(), 2, "{what}");
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("keeps the table that has its column")
            && notes.contains("new attribute(s) d go to"),
        "{what}"
    );

    // Two more new attributes would put 4 columns in the last table: refused, nothing written.
    execute_all(
        c,
        &[format!(
            "INSERT INTO {source} VALUES (1, 'e', '1e'), (2, 'f', '2f')"
        )],
    )
    .await;
    let refused = run_job(&job);
    let said = stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{what}: {said}");
    assert!(
        said.contains("cannot merge the new attribute(s) e, f into the split target's last table")
            && said.contains("split: 2 puts at most 2"),
        "{what}: {said}"
    );
    assert_eq!(read_table(c, db.what, &target).await, wide, "{what}");
    assert_eq!(read_table(c, db.what, &second).await, wide_2, "{what}");
    let left = names(c, &(db.list_staging)(&prefix)).await;
    assert!(left.is_empty(), "{what}: staging tables left: {left:?}");

    // split: auto keeps them in the last table where its row still fits.
    let auto = write_job(dir.path(), &source, &target, "auto");
    let out = run_job(&auto);
    assert!(out.status.success(), "{what}: {}", stderr(&out));
    assert_eq!(columns_of(c, db.what, &target).await, ["a", "b"], "{what}");
    assert_eq!(
        columns_of(c, db.what, &second).await,
        ["c", "d", "e", "f"],
        "{what}"
    );
    let wide_2 = read_table(c, db.what, &second).await;
    assert_eq!(wide_2[&1], cells(&[("c", "1c"), ("e", "1e")]), "{what}");
    assert_eq!(wide_2[&2], cells(&[("f", "2f")]), "{what}");

    // A gap in the tables (the first one dropped) is refused: the others would be left behind.
    drop_if_exists(c, &target).await;
    let gap = run_job(&auto);
    let said = stderr(&gap);
    assert_eq!(gap.status.code(), Some(1), "{what}: {said}");
    assert!(said.contains("_2 exists but"), "{what}: {said}");
    assert_eq!(read_table(c, db.what, &second).await, wide_2, "{what}");
    for t in every {
        drop_if_exists(c, t).await;
    }
}
