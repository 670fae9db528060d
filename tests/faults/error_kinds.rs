//! Errors are told apart by the server's error code, never by its English text (issue 19
//! item 2): on every backend a repeated key, a NULL in a NOT NULL column and a lock wait that
//! runs out are provoked and their kind checked; then a keyed append of repeated entities
//! must still be explained ("… has primary key (e1) …"). MariaDB runs everything twice, the
//! second time with its messages in German (`SET lc_messages = 'de_DE'` on each session), the
//! case the old English matchers silently lost.
//!
//! SQL Server numbers are the contract (2627/2601, 515, 1222); Babelfish answers the
//! constraint cases with the same numbers, but a lock wait that ran out with 33557097, its
//! number for any PostgreSQL error it has no SQL Server number for: a known Babelfish gap. Servers come from `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` /
//! `EAVPIVOT_MSSQL_URL`; with `EAVPIVOT_REQUIRE_SERVERS=1` an unreachable server fails.

use crate::servers;
use std::path::Path;
use std::time::Duration;

use eavpivot::backend::Backend;
use eavpivot::config::{self, StrategyName};
use eavpivot::error::ErrorKind;
use eavpivot::execute::{run_job, RunOptions};
use eavpivot::plan::PlanOptions;

use servers::{runtime, Db};

/// How each server opens a transaction that holds a row lock, and the session statements
/// that make it speak German (MariaDB only).
struct Server {
    db: Db,
    begin: &'static str,
    session: &'static [&'static str],
}

const GERMAN: &[&str] = &["SET lc_messages = 'de_DE'"];

async fn open(server: &Server) -> Option<Box<dyn Backend>> {
    let mut db = server.db.open().await?;
    for sql in server.session {
        db.execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{}: {sql}: {e}", server.db.what));
    }
    Some(db)
}

/// The error of `sql`, which must fail.
async fn failure(db: &mut dyn Backend, sql: &str) -> eavpivot::error::Error {
    match db.execute(sql).await {
        Ok(_) => panic!("{} accepted {sql}", db.dialect().name()),
        Err(e) => e,
    }
}

fn text_type(db: &dyn Backend) -> &'static str {
    // SQL Server's VARCHAR is not Unicode; the product's own tables use NVARCHAR there.
    if db.dialect().name() == "mssql" {
        "NVARCHAR(40)"
    } else {
        "VARCHAR(40)"
    }
}

/// Each kind provoked on one server, checked by kind (and, where given, by the language of
/// the server's own words, so the test knows it really met a non-English message).
async fn kinds(server: &Server, table: &str, words: Option<&str>) {
    let what = server.db.what;
    let Some(mut db) = open(server).await else {
        return;
    };
    let db = db.as_mut();
    servers::drop_if_exists(db, table).await;
    let text = text_type(db);
    for sql in [
        format!("CREATE TABLE {table} (k INTEGER NOT NULL PRIMARY KEY, u INTEGER UNIQUE, v {text} NOT NULL)"),
        format!("INSERT INTO {table} (k, u, v) VALUES (1, 10, 'a')"),
    ] {
        db.execute(&sql).await.unwrap_or_else(|e| panic!("{what}: {sql}: {e}"));
    }
    let repeated_key = failure(
        db,
        &format!("INSERT INTO {table} (k, u, v) VALUES (1, 11, 'b')"),
    )
    .await;
    assert_eq!(
        repeated_key.kind(),
        ErrorKind::UniqueViolation,
        "{what}: {repeated_key}"
    );
    if let Some(words) = words {
        assert!(
            repeated_key.to_string().contains(words),
            "{what}: not the expected language: {repeated_key}"
        );
    }
    let repeated_unique = failure(
        db,
        &format!("INSERT INTO {table} (k, u, v) VALUES (2, 10, 'b')"),
    )
    .await;
    assert_eq!(
        repeated_unique.kind(),
        ErrorKind::UniqueViolation,
        "{what}: {repeated_unique}"
    );
    let null = failure(
        db,
        &format!("INSERT INTO {table} (k, u, v) VALUES (3, 12, NULL)"),
    )
    .await;
    assert_eq!(null.kind(), ErrorKind::NotNullViolation, "{what}: {null}");
    let other = failure(db, &format!("SELECT * FROM {table}_missing")).await;
    assert_eq!(other.kind(), ErrorKind::Other, "{what}: {other}");
    assert!(!other.kind().is_key_violation());

    lock_timeout(server, db, table).await;
    servers::drop_if_exists(db, table).await;
}

/// A second session waits for the row the first holds: its lock_timeout runs out, which the
/// backend knows by the error's code and says in eavpivot's own words.
async fn lock_timeout(server: &Server, holder: &mut dyn Backend, table: &str) {
    let what = server.db.what;
    let Some(mut waiter) = open(server).await else {
        return;
    };
    for sql in [
        server.begin.to_string(),
        format!("UPDATE {table} SET v = 'held' WHERE k = 1"),
    ] {
        holder
            .execute(&sql)
            .await
            .unwrap_or_else(|e| panic!("{what}: {sql}: {e}"));
    }
    waiter
        .set_lock_timeout(Duration::from_secs(1))
        .await
        .unwrap_or_else(|e| panic!("{what}: setting lock_timeout: {e}"));
    let err = failure(
        waiter.as_mut(),
        &format!("UPDATE {table} SET v = 'waited' WHERE k = 1"),
    )
    .await;
    let _ = holder.execute("ROLLBACK").await;
    let line = err.to_string();
    if what == "mssql"
        && servers::is_babelfish(waiter.as_mut()).await
        && line.contains("SQL Server error 33557097 ")
    {
        // SQL Server says 1222; Babelfish passes PostgreSQL's lock_not_available on as its
        // catch-all number, which names no kind (and its text is English only).
        servers::known_babelfish_gap(
            "lock timeout",
            "error 33557097 (Babelfish's number for any unmapped PostgreSQL error), not 1222",
        );
        return;
    }
    assert!(
        line.contains("lock_timeout") && line.contains("expired waiting for a lock"),
        "{what}: a lock wait that ran out was not recognised: {line}"
    );
}

/// Appending the entities already in a keyed target: the error names the table and its key
/// whatever language the server's own words are in.
async fn explained(server: &Server, prefix: &str, words: Option<&str>) {
    let what = server.db.what;
    let Some(mut db) = open(server).await else {
        return;
    };
    let db = db.as_mut();
    let (source, target) = (format!("{prefix}_src"), format!("{prefix}_wide"));
    servers::drop_if_exists(db, &target).await;
    servers::drop_if_exists(db, &source).await;
    let text = text_type(db);
    for sql in [
        format!("CREATE TABLE {source} (e1 INTEGER, a {text}, v {text})"),
        format!("INSERT INTO {source} VALUES (1, 'x', 'a'), (2, 'x', 'b')"),
    ] {
        db.execute(&sql)
            .await
            .unwrap_or_else(|e| panic!("{what}: {sql}: {e}"));
    }
    let job = |if_exists: &str| {
        let yaml = format!(
            "name: keys\nsource: {{ table: {source}, alias: s }}\nentity: [{{ expr: s.e1, name: e1 }}]\n\
             attribute: s.a\nvalue: s.v\ntarget: {{ table: {target}, if_exists: {if_exists} }}\n"
        );
        config::parse_job(&yaml, Path::new("keys.yaml")).expect("job")
    };
    for strategy in [StrategyName::Pushdown, StrategyName::Stream] {
        let options = RunOptions {
            plan: PlanOptions {
                strategy: Some(strategy),
                ..PlanOptions::default()
            },
            ..RunOptions::default()
        };
        run_job(&job("replace"), db, &options)
            .await
            .unwrap_or_else(|e| panic!("{what} {strategy:?}: first load: {e}"));
        let err = match run_job(&job("append"), db, &options).await {
            Ok(_) => panic!("{what} {strategy:?}: appending repeated entities succeeded"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains(&format!("{target} has primary key (e1)")),
            "{what} {strategy:?}: the repeated key was not explained: {err}"
        );
        if let Some(words) = words {
            assert!(
                err.contains(words),
                "{what} {strategy:?}: not the expected language: {err}"
            );
        }
    }
    servers::drop_if_exists(db, &target).await;
    servers::drop_if_exists(db, &source).await;
}

fn names(what: &str) -> (String, String) {
    let prefix = format!("errkind_{}_{what}", std::process::id());
    (format!("{prefix}_t"), prefix)
}

fn check(server: Server, label: &str, words: Option<&str>) {
    let (table, prefix) = names(label);
    runtime().block_on(async {
        kinds(&server, &table, words).await;
        explained(&server, &prefix, words).await;
    });
}

#[test]
fn sqlite_errors_by_kind() {
    let server = Server {
        db: servers::sqlite(),
        begin: "BEGIN IMMEDIATE",
        session: &[],
    };
    check(server, "sqlite", None);
}

#[test]
fn postgres_errors_by_kind() {
    let server = Server {
        db: servers::postgres(),
        begin: "BEGIN",
        session: &[],
    };
    check(server, "postgres", None);
}

#[test]
fn mariadb_errors_by_kind() {
    let server = Server {
        db: servers::mariadb(),
        begin: "START TRANSACTION",
        session: &[],
    };
    check(server, "mariadb", Some("Duplicate entry"));
}

/// The same with MariaDB's German messages: "Doppelter Eintrag '1' für Schlüssel 'PRIMARY'".
#[test]
fn mariadb_in_german_errors_by_kind() {
    let server = Server {
        db: servers::mariadb(),
        begin: "START TRANSACTION",
        session: GERMAN,
    };
    check(server, "mariadb_de", Some("Doppelter Eintrag"));
}

#[test]
fn mssql_errors_by_kind() {
    let Some(db) = servers::mssql() else {
        return;
    };
    let server = Server {
        db,
        begin: "BEGIN TRANSACTION",
        session: &[],
    };
    check(server, "mssql", None);
}
