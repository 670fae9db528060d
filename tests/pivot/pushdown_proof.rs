//! Issue 20, item 1: the pushdown skips its conflict/pairs survey exactly where the source's
//! catalog proves every (entity, attribute) pair single — a unique key covered by the job's
//! entity and attribute columns, no join, no NULL entity — says so in the plan, and still
//! verifies every column's cells; everywhere else the survey runs and finds conflicts as
//! before. And the distinct-entity count comes from the INSERT's own row count.

use crate::servers;
use eavpivot::backend::Backend;
use eavpivot::config::{self, StrategyName};
use eavpivot::execute::{run_job, Outcome, RunOptions};
use eavpivot::plan::PlanOptions;
use servers::{drop_if_exists, mariadb, postgres, runtime, sqlite, Db};

const SURVEY: &str = "AS pairs";
const ENTITY_COUNT: &str = "SELECT COUNT(*) FROM (SELECT DISTINCT";

fn pushdown() -> RunOptions {
    RunOptions {
        plan: PlanOptions {
            strategy: Some(StrategyName::Pushdown),
            ..PlanOptions::default()
        },
        no_progress: true,
        ..RunOptions::default()
    }
}

fn sent(outcome: &Outcome, needle: &str) -> bool {
    outcome
        .report
        .statement_log
        .iter()
        .any(|s| s.sql.contains(needle))
}

fn proof_note(outcome: &Outcome) -> Option<&String> {
    outcome
        .report
        .notes
        .iter()
        .find(|n| n.contains("no conflict survey"))
}

/// `source` keyed as `key` (a constraint clause, or empty), three entities; `conflict` adds a
/// second, different value for (2, 'b').
async fn make_source(db: &mut dyn Backend, source: &str, key: &str, conflict: bool) {
    drop_if_exists(db, source).await;
    let key = if key.is_empty() {
        String::new()
    } else {
        format!(", {key}")
    };
    db.execute(&format!(
        "CREATE TABLE {source} (id INTEGER NOT NULL, attr VARCHAR(20) NOT NULL, val VARCHAR(20){key})"
    ))
    .await
    .expect("create source");
    let mut rows =
        "(1, 'a', 'x'), (1, 'b', NULL), (2, 'a', 'y'), (2, 'b', 'z'), (3, 'b', 'w')".to_string();
    if conflict {
        rows.push_str(", (2, 'b', 'zz')");
    }
    db.execute(&format!("INSERT INTO {source} VALUES {rows}"))
        .await
        .expect("fill source");
}

async fn pivot(db: &mut dyn Backend, source: &str, target: &str, extra: &str) -> Outcome {
    let text = format!(
        "name: {target}\nsource: {{ table: {source}, alias: k }}\nentity: [k.id]\nattribute: k.attr\nvalue: k.val\ntarget: {{ table: {target}, if_exists: replace }}\n{extra}"
    );
    let job = config::parse_job(&text, std::path::Path::new("j.yaml")).expect("job");
    run_job(&job, db, &pushdown()).await.expect("pushdown run")
}

async fn proof_cases(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let conn = conn.as_mut();
    let p = format!("perf{}_{}", std::process::id(), db.what);
    let (source, target) = (format!("{p}_kv"), format!("{p}_wide"));

    // Primary key (entity, attribute): no survey, the plan says why, the counts still check.
    make_source(conn, &source, "PRIMARY KEY (id, attr)", false).await;
    let out = pivot(conn, &source, &target, "").await;
    assert!(
        !sent(&out, SURVEY),
        "{}: survey sent despite the key",
        db.what
    );
    let note = proof_note(&out).unwrap_or_else(|| panic!("{}: no note", db.what));
    assert!(note.contains(&source), "{note}");
    assert_eq!(out.report.rows_written, 3, "{}", db.what);
    assert_eq!(out.report.cells_written, 4, "{}", db.what);
    assert_eq!(out.report.conflicts, 0);
    assert!(
        !sent(&out, ENTITY_COUNT),
        "{}: the INSERT's row count is the distinct-entity count",
        db.what
    );

    // A unique key on more columns than the job's proves nothing: the survey runs.
    make_source(conn, &source, "UNIQUE (id, attr, val)", true).await;
    let out = pivot(conn, &source, &target, "").await;
    assert!(sent(&out, SURVEY), "{}: wider key, no survey", db.what);
    assert!(proof_note(&out).is_none());
    assert_eq!(out.report.conflicts, 1, "{}", db.what);
    assert_eq!(out.report.cells_written, 4, "{}", db.what);

    // No key at all, a conflict, aggregate: error: refused before anything is written.
    make_source(conn, &source, "", true).await;
    let job = format!(
        "name: {target}\nsource: {{ table: {source}, alias: k }}\nentity: [k.id]\nattribute: k.attr\nvalue: k.val\ntarget: {{ table: {target}_e, if_exists: replace }}\npivot: {{ aggregate: error }}\n"
    );
    let job = config::parse_job(&job, std::path::Path::new("j.yaml")).expect("job");
    let err = match run_job(&job, conn, &pushdown()).await {
        Ok(_) => panic!("{}: a conflict under aggregate: error must refuse", db.what),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("conflicting values"), "{err}");

    // A key the job's columns cover, but read through a join: the survey runs.
    make_source(conn, &source, "PRIMARY KEY (id, attr)", false).await;
    let joined = format!("{p}_j");
    drop_if_exists(conn, &joined).await;
    conn.execute(&format!("CREATE TABLE {joined} (id INTEGER NOT NULL)"))
        .await
        .expect("join table");
    conn.execute(&format!("INSERT INTO {joined} VALUES (1), (2), (3)"))
        .await
        .expect("join rows");
    let text = format!(
        "name: {target}\nsource:\n  table: {source}\n  alias: k\n  joins:\n    - {{ table: {joined}, alias: j, on: \"j.id = k.id\" }}\nentity: [k.id]\nattribute: k.attr\nvalue: k.val\ntarget: {{ table: {target}, if_exists: replace }}\n"
    );
    let job = config::parse_job(&text, std::path::Path::new("j.yaml")).expect("job");
    let out = run_job(&job, conn, &pushdown()).await.expect("joined run");
    assert!(sent(&out, SURVEY), "{}: a join breaks the proof", db.what);
    assert_eq!(out.report.cells_written, 4);

    for t in [&source, &target, &joined] {
        drop_if_exists(conn, t).await;
    }
}

#[test]
fn sqlite_pushdown_skips_the_survey_only_where_the_key_proves_it() {
    runtime().block_on(proof_cases(&sqlite()));
}

#[test]
fn postgres_pushdown_skips_the_survey_only_where_the_key_proves_it() {
    runtime().block_on(proof_cases(&postgres()));
}

#[test]
fn mariadb_pushdown_skips_the_survey_only_where_the_key_proves_it() {
    runtime().block_on(proof_cases(&mariadb()));
}

/// MariaDB's pushdown tests the attribute by the column's character set from the catalog
/// (`utf8mb4_nopad_bin` for utf8mb4, the bytes for utf8mb3, the general conversion to
/// utf8mb4 bytes otherwise): names that differ only by case, accent or a trailing space stay
/// distinct columns with their own values, as under the general key.
#[test]
fn mariadb_pushdown_attribute_key_by_charset_keeps_names_apart() {
    runtime().block_on(async {
        let db = mariadb();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let conn = conn.as_mut();
        let p = format!("perf{}_cs", std::process::id());
        let (source, target) = (format!("{p}_kv"), format!("{p}_wide"));
        let cases = [
            ("utf8mb4", "COLLATE utf8mb4_nopad_bin", true),
            ("utf8mb3", "CAST(k.attr AS BINARY)", false),
            ("latin1", "CAST(CONVERT(k.attr USING utf8mb4) AS BINARY)", false),
        ];
        for (charset, key, emoji) in cases {
            drop_if_exists(conn, &source).await;
            conn.execute(&format!(
                "CREATE TABLE {source} (id INTEGER NOT NULL, attr VARCHAR(20) CHARACTER SET {charset} NOT NULL, val VARCHAR(20))"
            ))
            .await
            .expect("create source");
            let mut names = vec!["a", "A", "a ", "é", "e", "É"];
            if emoji {
                names.push("😀");
            }
            let rows: Vec<String> = names
                .iter()
                .enumerate()
                .flat_map(|(i, n)| {
                    [
                        format!("(1, '{n}', 'v{i}')"),
                        format!("(2, '{n}', 'w{i}')"),
                    ]
                })
                .collect();
            conn.execute(&format!("INSERT INTO {source} VALUES {}", rows.join(", ")))
                .await
                .expect("fill source");
            let out = pivot(conn, &source, &target, "").await;
            let insert = out
                .report
                .statement_log
                .iter()
                .find(|s| s.sql.starts_with("INSERT INTO"))
                .unwrap_or_else(|| panic!("{charset}: no INSERT sent"));
            assert!(insert.sql.contains(key), "{charset}: {}", insert.sql);
            assert_eq!(out.report.rows_written, 2, "{charset}");
            assert_eq!(
                out.report.cells_written,
                2 * names.len() as u64,
                "{charset}"
            );
            for (entity, tag) in [(1, 'v'), (2, 'w')] {
                let rows = conn
                    .query(&format!("SELECT * FROM {target} WHERE id = {entity}"))
                    .await
                    .expect("read back");
                let mut got: Vec<String> = rows[0]
                    .iter()
                    .skip(1)
                    .map(|v| v.as_text().unwrap_or_default())
                    .collect();
                got.sort();
                let mut want: Vec<String> =
                    (0..names.len()).map(|i| format!("{tag}{i}")).collect();
                want.sort();
                assert_eq!(got, want, "{charset}: entity {entity}'s cells");
            }
        }
        for t in [&source, &target] {
            drop_if_exists(conn, t).await;
        }
    });
}
