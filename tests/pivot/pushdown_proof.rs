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
            if charset != "latin1" {
                // One identifier each to MariaDB (`utf8mb3_general_ci` lowers `İ` to `i`, and
                // `Σ` to `σ` at the end of a word too): `Duplicate column name` before the
                // names were compared a character at a time.
                names.extend(["İ", "i", "ΑΣ", "ασ"]);
            }
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

/// Rows of `sql` as texts (NULL as "-").
async fn texts(db: &mut dyn Backend, sql: &str) -> Vec<Vec<String>> {
    let rows = db.query(sql).await.expect(sql);
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| v.as_text().unwrap_or_else(|| "-".into()))
                .collect()
        })
        .collect()
}

/// PostgreSQL's pushdown makes a new table by `CREATE TABLE … AS` its pivot where the plan
/// gets parallel workers (an `INSERT … SELECT` never does) and adds the key after: the
/// table has the key (and its index's name after the swap), the types and the cells the
/// INSERT way gave it, first built under its own name, then as a staging table swapped in.
/// Where the plan gets no workers, or a column is bounded text (a CAST would cut a value the
/// INSERT refuses), the table is created and INSERTed into as before, and a value too long
/// still stops the run.
/// Three rows get no workers: plan as if they were free (this connection only).
const PARALLEL_SETTINGS: &str = "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2";

#[test]
fn postgres_pushdown_creates_a_new_table_as_its_pivot() {
    runtime().block_on(async {
        let db = postgres();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let conn = conn.as_mut();
        let p = format!("pgrun{}", std::process::id());
        let (source, target) = (format!("{p}_kv"), format!("{p}_wide"));
        drop_if_exists(conn, &target).await;
        make_source(conn, &source, "PRIMARY KEY (id, attr)", false).await;
        let columns = format!(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull::text FROM pg_attribute a WHERE a.attrelid = '{target}'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"
        );
        let key = format!(
            "SELECT c.conname::text, pg_get_constraintdef(c.oid) FROM pg_constraint c WHERE c.conrelid = '{target}'::regclass AND c.contype = 'p'"
        );
        let cells = format!("SELECT id::text, a, b FROM {target} ORDER BY id");
        let want_cells = [["1", "x", "-"], ["2", "y", "z"], ["3", "-", "w"]];
        conn.execute(PARALLEL_SETTINGS).await.expect("parallel settings");
        for round in ["new", "replacing"] {
            let out = pivot(conn, &source, &target, "").await;
            assert!(sent(&out, ") AS\nSELECT"), "{round}: not CREATE TABLE … AS");
            assert!(sent(&out, "ADD PRIMARY KEY"), "{round}: no key added");
            assert!(!sent(&out, "INSERT INTO"), "{round}: INSERT sent");
            assert_eq!(out.report.rows_written, 3, "{round}");
            assert_eq!(out.report.cells_written, 4, "{round}");
            assert!(
                !sent(&out, ENTITY_COUNT),
                "{round}: CREATE TABLE … AS reports its rows: the distinct-entity count"
            );
            assert_eq!(
                texts(conn, &columns).await,
                [
                    ["id", "integer", "true"],
                    ["a", "text", "false"],
                    ["b", "text", "false"]
                ],
                "{round}"
            );
            assert_eq!(
                texts(conn, &key).await,
                [[format!("{target}_pkey"), "PRIMARY KEY (id)".to_string()]],
                "{round}"
            );
            assert_eq!(texts(conn, &cells).await, want_cells, "{round}");
        }

        // No workers: CREATE TABLE and the INSERT, as before, in the transaction.
        conn.execute("SET max_parallel_workers_per_gather = 0")
            .await
            .expect("no workers");
        let out = pivot(conn, &source, &target, "").await;
        assert!(sent(&out, "EXPLAIN (FORMAT JSON) SELECT"), "no probe");
        assert!(sent(&out, "INSERT INTO"), "no workers: no INSERT");
        assert!(!sent(&out, ") AS\nSELECT"), "no workers, yet CREATE TABLE … AS");
        assert_eq!(texts(conn, &columns).await[1][1], "text");
        assert_eq!(texts(conn, &key).await.len(), 1, "no workers: no key");
        assert_eq!(texts(conn, &cells).await, want_cells, "no workers");
        conn.execute(PARALLEL_SETTINGS).await.expect("parallel settings");

        // A bounded text column: INSERT … SELECT into the declared table, as before.
        let bounded = "pivot: { column_type: \"varchar(1)\" }\n";
        let out = pivot(conn, &source, &target, bounded).await;
        assert!(sent(&out, "INSERT INTO"), "bounded text: no INSERT");
        assert!(!sent(&out, ") AS\nSELECT"), "bounded text made by a CAST");
        assert_eq!(texts(conn, &columns).await[1][1], "character varying(1)");
        conn.execute(&format!(
            "UPDATE {source} SET val = 'long' WHERE id = 3 AND attr = 'b'"
        ))
        .await
        .expect("a long value");
        let text = format!(
            "name: {target}\nsource: {{ table: {source}, alias: k }}\nentity: [k.id]\nattribute: k.attr\nvalue: k.val\ntarget: {{ table: {target}, if_exists: replace }}\n{bounded}"
        );
        let job = config::parse_job(&text, std::path::Path::new("j.yaml")).expect("job");
        assert!(
            run_job(&job, conn, &pushdown()).await.is_err(),
            "a value longer than varchar(1) was written"
        );
        assert_eq!(texts(conn, &cells).await, want_cells, "target changed");
        conn.execute("RESET ALL").await.expect("reset");
        for t in [&source, &target] {
            drop_if_exists(conn, t).await;
        }
    });
}

/// `CREATE TABLE … AS` takes each column's collation from the SELECT: a source whose entity
/// and value columns are `COLLATE "C"` must still give the table `CREATE TABLE` declares
/// (the default collation), as the INSERT path and the stream do.
#[test]
fn postgres_created_as_table_keeps_the_default_collation() {
    runtime().block_on(async {
        let db = postgres();
        let Some(mut conn) = db.open().await else {
            return;
        };
        let conn = conn.as_mut();
        let p = format!("pgcoll{}", std::process::id());
        let (source, target) = (format!("{p}_kv"), format!("{p}_wide"));
        drop_if_exists(conn, &target).await;
        drop_if_exists(conn, &source).await;
        conn.execute(&format!(
            "CREATE TABLE {source} (id text COLLATE \"C\" NOT NULL, attr text NOT NULL, val text COLLATE \"C\", PRIMARY KEY (id, attr)); INSERT INTO {source} VALUES ('1', 'a', 'x'), ('2', 'a', 'y'), ('2', 'b', 'z')"
        ))
        .await
        .expect("source");
        conn.execute(PARALLEL_SETTINGS).await.expect("parallel settings");
        let out = pivot(conn, &source, &target, "").await;
        assert!(sent(&out, ") AS\nSELECT"), "not CREATE TABLE … AS");
        let collations = format!(
            "SELECT a.attname::text, COALESCE(c.collname::text, '-') FROM pg_attribute a LEFT JOIN pg_collation c ON c.oid = a.attcollation WHERE a.attrelid = '{target}'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"
        );
        assert_eq!(
            texts(conn, &collations).await,
            [["id", "default"], ["a", "default"], ["b", "default"]]
        );
        let cells = format!("SELECT id, a, COALESCE(b, '-') FROM {target} ORDER BY id");
        assert_eq!(texts(conn, &cells).await, [["1", "x", "-"], ["2", "y", "z"]]);
        conn.execute("RESET ALL").await.expect("reset");
        for t in [&source, &target] {
            drop_if_exists(conn, t).await;
        }
    });
}
