//! `if_exists: replace` over a target the user has built on, through the real binary, on
//! SQLite, PostgreSQL and MariaDB (SQL Server: tests/mssql):
//! * what would silently go with the replaced table — an index, a trigger, a grant — is
//!   named in a plan note (`--json` `notes`), and is indeed gone after the run;
//! * what the database would refuse to drop or rename it from under — another table's
//!   foreign key, a PostgreSQL view — is refused before any write (exit 2, the target as it
//!   was). Before, the whole load ran first and then failed with the database's hint to `DROP
//!   … CASCADE`; on MariaDB the foreign key followed the RENAME to the replaced table, which
//!   could then never be dropped, so every later run of the job failed;
//! * a SQLite view over the target reads the table swapped in (its RENAME failed before).

use crate::servers;

use eavpivot::backend::Backend;
use servers::*;

/// The statements that build on `t` (trigger log `l`, role `r`): an index and a trigger
/// everywhere, a grant where a role is at hand.
fn build_on(what: &str, t: &str, l: &str, r: &str) -> (Vec<String>, Vec<String>) {
    let index = format!("CREATE INDEX {t}_x ON {t} (color)");
    let log = format!("CREATE TABLE {l} (id INT)");
    let statements = match what {
        "sqlite" => vec![
            index,
            log,
            format!("CREATE TRIGGER {t}_trg AFTER UPDATE ON {t} BEGIN INSERT INTO {l} VALUES (NEW.id); END"),
        ],
        "postgres" => vec![
            index,
            log,
            format!("CREATE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO {l} VALUES (NEW.id); RETURN NEW; END $$"),
            format!("CREATE TRIGGER {t}_trg BEFORE UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()"),
            format!("CREATE ROLE {r}"),
            format!("GRANT SELECT ON {t} TO {r}"),
        ],
        "mariadb" => vec![
            index,
            log,
            format!("CREATE TRIGGER {t}_trg BEFORE UPDATE ON {t} FOR EACH ROW INSERT INTO {l} VALUES (NEW.id)"),
        ],
        other => panic!("nothing to build on {other}"),
    };
    let mut noted = vec![format!("{t}_x"), format!("trigger {t}_trg")];
    if what == "postgres" {
        noted.push(format!("grant SELECT to {r}"));
    }
    (statements, noted)
}

async fn replace_over_dependents(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c: &mut dyn Backend = conn.as_mut();
    let p = format!("rdep{}_{}", std::process::id(), db.what);
    let (source, target, log, child, view, role) = (
        format!("{p}_kv"),
        format!("{p}_wide"),
        format!("{p}_log"),
        format!("{p}_child"),
        format!("{p}_view"),
        format!("{p}_role"),
    );
    let cleanup = [
        format!("DROP VIEW IF EXISTS {view}"),
        format!("DROP TABLE IF EXISTS {child}"),
    ];
    execute_all(c, &cleanup).await;
    for t in [&source, &target, &log] {
        drop_if_exists(c, t).await;
    }
    if db.what == "postgres" {
        execute_all(c, &[format!("DROP ROLE IF EXISTS {role}")]).await;
    }
    execute_all(
        c,
        &[
            format!("CREATE TABLE {source} (id INT, attr VARCHAR(20), val VARCHAR(20))"),
            format!("INSERT INTO {source} VALUES (1, 'color', 'red'), (2, 'color', 'blue')"),
        ],
    )
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let job = kv_job(dir.path(), &source, &target, "replace");
    let job = job.display().to_string();
    let replace = || run(&["run", &job, "--json"], &db.url);
    let out = replace();
    assert!(out.status.success(), "{}: {}", db.what, stderr(&out));

    // Built on, then replaced: the run says what the new table does not have.
    let (statements, noted) = build_on(db.what, &target, &log, &role);
    execute_all(c, &statements).await;
    let out = replace();
    assert!(out.status.success(), "{}: {}", db.what, stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json");
    let notes = report["notes"].to_string();
    for what in &noted {
        assert!(
            notes.contains(what.as_str()),
            "{}: {what} not in {notes}",
            db.what
        );
    }
    // …and it is so: the trigger went with the replaced table.
    execute_all(
        c,
        &[format!("UPDATE {target} SET color = 'green' WHERE id = 1")],
    )
    .await;
    let logged = text_rows(c, &format!("SELECT id FROM {log}")).await;
    assert!(logged.is_empty(), "{}: the trigger is still there", db.what);

    // Another table's foreign key: refused before any write, the target as it was.
    execute_all(
        c,
        &[
            format!("CREATE TABLE {child} (id INT, FOREIGN KEY (id) REFERENCES {target} (id))"),
            format!("INSERT INTO {child} VALUES (2)"),
            format!("UPDATE {source} SET val = 'black' WHERE id = 2"),
        ],
    )
    .await;
    let before = read_table(c, db.what, &target).await;
    let out = replace();
    assert_eq!(out.status.code(), Some(2), "{}: {}", db.what, stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!("cannot replace {target}"))
            && said.contains("foreign key")
            && said.contains(&child)
            && said.contains("nothing was written"),
        "{}: {said}",
        db.what
    );
    assert_eq!(read_table(c, db.what, &target).await, before, "{}", db.what);
    let left = names(c, &(db.list_staging)(&p)).await;
    assert!(left.is_empty(), "{}: left {left:?}", db.what);
    execute_all(c, &[format!("DROP TABLE {child}")]).await;

    // A view over the target: PostgreSQL binds it to the table, so it blocks; SQLite and
    // MariaDB read the target by name, so the view reads the table swapped in.
    execute_all(
        c,
        &[format!(
            "CREATE VIEW {view} AS SELECT id, color FROM {target}"
        )],
    )
    .await;
    let out = replace();
    if db.what == "postgres" {
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("view {view}")),
            "{}",
            stderr(&out)
        );
    } else {
        assert!(out.status.success(), "{}: {}", db.what, stderr(&out));
        let rows = text_rows(c, &format!("SELECT color FROM {view} WHERE id = 2")).await;
        assert_eq!(rows, [["black"]], "{}: the view after the swap", db.what);
    }

    execute_all(c, &cleanup).await;
    for t in [&source, &target, &log] {
        drop_if_exists(c, t).await;
    }
    if db.what == "postgres" {
        execute_all(
            c,
            &[
                format!("DROP FUNCTION IF EXISTS {target}_f()"),
                format!("DROP ROLE IF EXISTS {role}"),
            ],
        )
        .await;
    }
}

#[test]
fn sqlite_replace_names_what_it_leaves_and_refuses_what_blocks_it() {
    runtime().block_on(replace_over_dependents(&sqlite()));
}

#[test]
fn postgres_replace_names_what_it_leaves_and_refuses_what_blocks_it() {
    runtime().block_on(replace_over_dependents(&postgres()));
}

#[test]
fn mariadb_replace_names_what_it_leaves_and_refuses_what_blocks_it() {
    runtime().block_on(replace_over_dependents(&mariadb()));
}
