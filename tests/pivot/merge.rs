//! `if_exists: merge` on SQLite, PostgreSQL and MariaDB, both strategies, through the real
//! binary: a source changed between two runs (values changed, a cell removed, an entity
//! removed, an entity added, a new attribute) is merged into the target of the first run and
//! compared cell by cell with a fresh full pivot of the changed source — with
//! `on_missing: keep` (the removed entity stays, as it was) and `delete` (identical to the
//! fresh pivot); the report's counts are checked; a merge killed before it commits leaves the
//! target exactly as it was; and `${NAME}` variables select a delta window. On Citus (when
//! `EAVPIVOT_CITUS_URL` is set) the source is distributed by its entity `id`, and the target
//! and the fresh pivot must come out distributed and co-located with it.

use crate::servers;

use std::path::PathBuf;

use eavpivot::backend::Backend;
use servers::*;

struct Case {
    source: String,
    target: String,
    fresh: String,
    dir: tempfile::TempDir,
}

impl Case {
    fn job(&self, target: &str, if_exists: &str, on_missing: &str, filter: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{target}_{if_exists}.yaml"));
        let missing = match if_exists {
            "merge" => format!(", on_missing: {on_missing}"),
            _ => String::new(),
        };
        std::fs::write(
            &path,
            format!(
                "name: merge_test\nsource: {{table: {}, alias: s, where: \"{filter}\"}}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: {if_exists}{missing}}}\n",
                self.source
            ),
        )
        .expect("write job");
        path
    }
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("--json report")
}

fn merged(report: &serde_json::Value) -> (u64, u64, u64, u64, Vec<String>) {
    let m = &report["merged"][0];
    let n = |k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k} in {report}"));
    let added = m["added_columns"]
        .as_array()
        .expect("added_columns")
        .iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    (
        n("inserted"),
        n("updated"),
        n("unchanged"),
        n("deleted"),
        added,
    )
}

async fn merge_case(db: &Db, strategy: &str) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c: &mut dyn Backend = conn.as_mut();
    // The catalog to read tables through (Citus's is PostgreSQL's).
    let dialect = c.dialect().name();
    let citus = db.what == "citus";
    let prefix = format!("mrg{}_{}_{strategy}", std::process::id(), db.what);
    let case = Case {
        source: format!("{prefix}_kv"),
        target: format!("{prefix}_wide"),
        fresh: format!("{prefix}_fresh"),
        dir: tempfile::tempdir().expect("temp dir"),
    };
    for t in [&case.source, &case.target, &case.fresh] {
        drop_if_exists(c, t).await;
    }
    c.execute(&format!(
        "CREATE TABLE {} (id INT, attr VARCHAR(20), val VARCHAR(40))",
        case.source
    ))
    .await
    .expect("source");
    if citus {
        distribute(c, &case.source, "id").await.expect("distribute");
    }
    let mut rows = Vec::new();
    for id in 1..=20 {
        for a in 1..=3 {
            rows.push(format!("({id}, 'a{a}', 'v{id}.{a}')"));
        }
    }
    c.execute(&format!(
        "INSERT INTO {} VALUES {}",
        case.source,
        rows.join(", ")
    ))
    .await
    .expect("rows");
    let args = |job: &PathBuf| {
        vec![
            "run".to_string(),
            job.display().to_string(),
            "--strategy".into(),
            strategy.into(),
            "--json".into(),
        ]
    };
    let run_job = |job: PathBuf| {
        let a = args(&job);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run(&a, &db.url)
    };
    let keep = case.job(&case.target, "merge", "keep", "1 = 1");
    // The first merge into an absent target creates it.
    let first = json(&run_job(keep.clone()));
    assert!(first["merged"].as_array().expect("merged").is_empty());
    let before = read_table(c, dialect, &case.target).await;
    assert_eq!(before.len(), 20);
    if citus {
        co_located(c, &case.target, &case.source)
            .await
            .expect("merge created");
    }

    // The source changes: a value, a removed cell, a removed entity, a new entity, a new
    // attribute.
    let s = &case.source;
    for sql in [
        format!("UPDATE {s} SET val = 'changed' WHERE id = 1 AND attr = 'a1'"),
        format!("DELETE FROM {s} WHERE id = 2 AND attr = 'a2'"),
        format!("DELETE FROM {s} WHERE id = 3"),
        format!("INSERT INTO {s} VALUES (21, 'a1', 'new'), (4, 'a4', 'fourth'), (21, 'a4', 'x')"),
    ] {
        c.execute(&sql).await.expect("change source");
    }
    let fresh_job = case.job(&case.fresh, "replace", "keep", "1 = 1");
    json(&run_job(fresh_job));
    let fresh = read_table(c, dialect, &case.fresh).await;
    if citus {
        co_located(c, &case.fresh, &case.source)
            .await
            .expect("replace");
    }

    // A merge killed before it commits leaves the target exactly as it was.
    for point in ["created", "loaded"] {
        let a = args(&keep);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        kill_9(start_paused(&a, &db.url, point));
        assert_eq!(
            read_table(c, dialect, &case.target).await,
            before,
            "{} {strategy}: target changed by a merge killed at {point}",
            db.what
        );
    }

    let report = json(&run_job(keep.clone()));
    assert_eq!(
        merged(&report),
        (1, 3, 16, 0, vec!["a4".to_string()]),
        "{} {strategy}: {report}",
        db.what
    );
    let mut want = fresh.clone();
    want.insert(3, before[&3].clone());
    assert_eq!(
        read_table(c, dialect, &case.target).await,
        want,
        "{} {strategy} keep",
        db.what
    );

    // From here an UPDATE trigger logs every row the merges write (not on Citus, which
    // refuses triggers on distributed tables by default).
    let log = format!("{prefix}_log");
    drop_if_exists(c, &log).await;
    let logged = !citus;
    if logged {
        execute_all(c, &update_log(db.what, &case.target, &log, &prefix)).await;
    }
    let delete = case.job(&case.target, "merge", "delete", "1 = 1");
    let report = json(&run_job(delete));
    assert_eq!(merged(&report), (0, 0, 20, 1, vec![]), "{report}");
    if logged {
        // Twenty entities merged, none changed: none rewritten.
        let rows = text_rows(c, &format!("SELECT id FROM {log} ORDER BY id")).await;
        assert!(rows.is_empty(), "{} {strategy}: rewrote {rows:?}", db.what);
    }
    assert_eq!(
        read_table(c, dialect, &case.target).await,
        fresh,
        "{} {strategy} delete",
        db.what
    );

    // A delta window from --var: only entity 1 changes, the rest is kept as it is.
    c.execute(&format!(
        "UPDATE {s} SET val = 'again' WHERE id = 1 AND attr = 'a2'"
    ))
    .await
    .expect("change");
    let window = case.job(&case.target, "merge", "keep", "s.id <= ${upto}");
    let mut a = args(&window);
    a.extend(["--var".to_string(), "upto=1".to_string()]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let report = json(&run(&a, &db.url));
    assert_eq!(merged(&report), (0, 1, 0, 0, vec![]), "{report}");
    let now = read_table(c, dialect, &case.target).await;
    assert_eq!(now[&1]["a2"], "again");
    if logged {
        let rows = text_rows(c, &format!("SELECT id FROM {log} ORDER BY id")).await;
        assert_eq!(rows, vec![vec!["1".to_string()]], "{} {strategy}", db.what);
    }
    assert_eq!(now.len(), fresh.len());
    if citus {
        co_located(c, &case.target, &case.source)
            .await
            .expect("merged");
    }
    // Without the variable the job is refused before it runs.
    let a = args(&window);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = run(&a, &db.url);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("${upto} is not defined"),
        "{}",
        stderr(&out)
    );

    let left = names(c, &(db.list_staging)(&prefix)).await;
    assert!(left.is_empty(), "staging tables left: {left:?}");
    for t in [&case.source, &case.target, &case.fresh, &log] {
        drop_if_exists(c, t).await;
    }
    if db.what == "postgres" {
        execute_all(c, &[format!("DROP FUNCTION IF EXISTS {prefix}_logged()")]).await;
    }
}

/// `pivot.on_new_attributes: ignore`: an attribute the target has no column for is left out,
/// and the report says so — the column is not listed, its cells are not counted as written
/// (`cells_written`, before: counted), `merged[].ignored_columns`/`ignored_cells` name them.
async fn ignore_case(db: &Db, strategy: &str) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c: &mut dyn Backend = conn.as_mut();
    let prefix = format!("mig{}_{}_{strategy}", std::process::id(), db.what);
    let case = Case {
        source: format!("{prefix}_kv"),
        target: format!("{prefix}_wide"),
        fresh: String::new(),
        dir: tempfile::tempdir().expect("temp dir"),
    };
    for t in [&case.source, &case.target] {
        drop_if_exists(c, t).await;
    }
    execute_all(
        c,
        &[
            format!(
                "CREATE TABLE {} (id INT, attr VARCHAR(20), val VARCHAR(40))",
                case.source
            ),
            format!(
                "INSERT INTO {} VALUES (1, 'a1', 'v'), (2, 'a1', 'w')",
                case.source
            ),
        ],
    )
    .await;
    let job = case.job(&case.target, "merge", "keep", "1 = 1");
    append_to_job(&job, "pivot: {on_new_attributes: ignore}");
    let job = job.display().to_string();
    let merge = || {
        json(&run(
            &["run", &job, "--strategy", strategy, "--json"],
            &db.url,
        ))
    };
    merge();
    execute_all(
        c,
        &[format!(
            "INSERT INTO {} VALUES (1, 'a2', 'x'), (2, 'a2', 'y'), (3, 'a2', 'z')",
            case.source
        )],
    )
    .await;
    let report = merge();
    let what = format!("{} {strategy}: {report}", db.what);
    assert_eq!(merged(&report), (1, 0, 2, 0, vec![]), "{what}");
    assert_eq!(
        report["merged"][0]["ignored_columns"],
        serde_json::json!(["a2"]),
        "{what}"
    );
    assert_eq!(report["merged"][0]["ignored_cells"], 3, "{what}");
    assert_eq!(report["cells_written"], 2, "{what}");
    let columns: Vec<&str> = report["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["column"].as_str())
        .collect();
    assert_eq!(columns, ["a1"], "{what}");
    let target = read_table(c, db.what, &case.target).await;
    assert_eq!(target.len(), 3, "{what}");
    assert!(
        target.values().all(|cells| !cells.contains_key("a2")),
        "{what}: {target:?}"
    );
    for t in [&case.source, &case.target] {
        drop_if_exists(c, t).await;
    }
}

#[test]
fn merges_ignore_new_attributes_and_say_so() {
    runtime().block_on(async {
        for db in [sqlite(), postgres(), mariadb()] {
            ignore_case(&db, "pushdown").await;
            ignore_case(&db, "stream").await;
        }
    });
}

/// A `log` table and a trigger on `target` that adds the `id` of every row an UPDATE writes.
fn update_log(what: &str, target: &str, log: &str, prefix: &str) -> Vec<String> {
    let table = format!("CREATE TABLE {log} (id INT)");
    match what {
        "sqlite" => vec![
            table,
            format!("CREATE TRIGGER {prefix}_trg AFTER UPDATE ON {target} BEGIN INSERT INTO {log} VALUES (NEW.id); END"),
        ],
        "postgres" => vec![
            table,
            format!("CREATE FUNCTION {prefix}_logged() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO {log} VALUES (NEW.id); RETURN NEW; END $$"),
            format!("CREATE TRIGGER {prefix}_trg BEFORE UPDATE ON {target} FOR EACH ROW EXECUTE FUNCTION {prefix}_logged()"),
        ],
        "mariadb" => vec![
            table,
            format!("CREATE TRIGGER {prefix}_trg BEFORE UPDATE ON {target} FOR EACH ROW INSERT INTO {log} VALUES (NEW.id)"),
        ],
        other => panic!("no update log for {other}"),
    }
}

#[test]
fn sqlite_merges() {
    let db = sqlite();
    runtime().block_on(async {
        merge_case(&db, "pushdown").await;
        merge_case(&db, "stream").await;
    });
}

#[test]
fn postgres_merges() {
    let db = postgres();
    runtime().block_on(async {
        merge_case(&db, "pushdown").await;
        merge_case(&db, "stream").await;
    });
}

#[test]
fn mariadb_merges() {
    let db = mariadb();
    runtime().block_on(async {
        merge_case(&db, "pushdown").await;
        merge_case(&db, "stream").await;
    });
}

#[test]
fn citus_merges() {
    let Some(db) = citus() else {
        return;
    };
    runtime().block_on(async {
        merge_case(&db, "pushdown").await;
        merge_case(&db, "stream").await;
    });
}
