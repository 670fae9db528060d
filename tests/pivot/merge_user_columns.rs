//! A merge into a target the user has changed since the last run, through the real binary,
//! both strategies, on every backend:
//! * the user's own columns that the database fills (a DEFAULT, identity or auto-increment,
//!   generated) are left as they are — before, a generated or identity column made every
//!   merge fail, and a DEFAULT column failed the count check whenever an entity was new;
//! * a target without a unique key on its entity columns is refused before any write, naming
//!   the table and the key to add (PostgreSQL and SQLite failed with the database's
//!   `ON CONFLICT` message);
//! * MariaDB: a table whose name differs from the target's only in case is another table
//!   (`lower_case_table_names = 0`): the merge creates the target beside it.

use crate::servers;

use servers::*;

/// What the user does to one backend's target, and how to read it back.
struct UserColumns {
    /// Statements run on the target after the first load (`{t}` is the target).
    alter: &'static [&'static str],
    /// `SELECT` of `id, Size, Color, Weight, note, g, rid present` ordered by id.
    read: &'static str,
    /// Columns the merge must report as kept.
    kept: &'static [&'static str],
    /// The generated column's expected value for Size `M`→`XL` etc. (None: not on this one).
    generated: bool,
}

fn job(dir: &std::path::Path, prefix: &str) -> std::path::PathBuf {
    kv_job(
        dir,
        &format!("{prefix}_kv"),
        &format!("{prefix}_wide"),
        "merge",
    )
}

fn report(out: &std::process::Output, what: &str) -> serde_json::Value {
    assert!(out.status.success(), "{what}: {}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: --json: {e}"))
}

async fn user_columns_are_kept(db: &Db, user: &UserColumns) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c = conn.as_mut();
    let prefix = format!("userown{}", std::process::id());
    let (kv, target) = (format!("{prefix}_kv"), format!("{prefix}_wide"));
    let dir = tempfile::tempdir().expect("temp dir");
    let job = job(dir.path(), &prefix);
    let text = if db.what == "mssql" {
        "NVARCHAR(20)"
    } else {
        "VARCHAR(20)"
    };
    for strategy in ["pushdown", "stream"] {
        let what = format!("{} {strategy}", db.what);
        drop_if_exists(c, &target).await;
        drop_if_exists(c, &kv).await;
        execute_all(
            c,
            &[
                format!("CREATE TABLE {kv} (id INT, attr {text}, val {text})"),
                format!("INSERT INTO {kv} VALUES (1, 'Size', 'M'), (1, 'Color', 'red'), (2, 'Size', 'L')"),
            ],
        )
        .await;
        let out = run_strategy(&job, strategy, &db.url);
        assert!(out.status.success(), "{what} first: {}", stderr(&out));
        let alter: Vec<String> = user
            .alter
            .iter()
            .map(|s| s.replace("{t}", &target))
            .collect();
        execute_all(c, &alter).await;
        // A changed cell, a new entity, and a new attribute (MariaDB merges into a copy).
        execute_all(
            c,
            &[
                format!("UPDATE {kv} SET val = 'XL' WHERE id = 1 AND attr = 'Size'"),
                format!("INSERT INTO {kv} VALUES (3, 'Size', 'S'), (2, 'Weight', '5')"),
            ],
        )
        .await;
        let out = run(
            &[
                "run",
                &job.display().to_string(),
                "--strategy",
                strategy,
                "--json",
            ],
            &db.url,
        );
        let json = report(&out, &what);
        let merged = &json["merged"][0];
        assert_eq!(
            (merged["inserted"].as_u64(), merged["updated"].as_u64()),
            (Some(1), Some(2)),
            "{what}: {merged}"
        );
        let kept: Vec<&str> = merged["kept_columns"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: kept_columns in {merged}"))
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(kept, user.kept, "{what}: {merged}");
        let g = |v: &str| {
            if user.generated {
                format!("{v}!")
            } else {
                String::new()
            }
        };
        let expected = vec![
            vec![
                "1".into(),
                "XL".into(),
                "red".into(),
                "".into(),
                "mine".into(),
                g("XL"),
                "1".into(),
            ],
            vec![
                "2".into(),
                "L".into(),
                "".into(),
                "5".into(),
                "mine".into(),
                g("L"),
                "1".into(),
            ],
            vec![
                "3".into(),
                "S".into(),
                "".into(),
                "".into(),
                "dflt".into(),
                g("S"),
                "1".into(),
            ],
        ];
        let rows = text_rows(c, &user.read.replace("{t}", &target)).await;
        assert_eq!(rows, expected, "{what}");
        let left = names(c, &(db.list_staging)(&prefix)).await;
        assert!(left.is_empty(), "{what}: staging left: {left:?}");
    }
    drop_if_exists(c, &target).await;
    drop_if_exists(c, &kv).await;
}

#[test]
fn sqlite_a_merge_leaves_the_users_own_columns() {
    let db = sqlite();
    runtime().block_on(user_columns_are_kept(
        &db,
        &UserColumns {
            alter: &[
                "ALTER TABLE {t} ADD COLUMN note TEXT DEFAULT 'dflt'",
                "UPDATE {t} SET note = 'mine'",
                "ALTER TABLE {t} ADD COLUMN g TEXT GENERATED ALWAYS AS (Size || '!') VIRTUAL",
            ],
            read: "SELECT id, Size, Color, Weight, note, g, 1 FROM {t} ORDER BY id",
            kept: &["note"],
            generated: true,
        },
    ));
}

#[test]
fn postgres_a_merge_leaves_the_users_own_columns() {
    let db = postgres();
    runtime().block_on(user_columns_are_kept(
        &db,
        &UserColumns {
            alter: &[
                "ALTER TABLE {t} ADD COLUMN note TEXT DEFAULT 'dflt'",
                "UPDATE {t} SET note = 'mine'",
                "ALTER TABLE {t} ADD COLUMN g TEXT GENERATED ALWAYS AS (\"Size\" || '!') STORED",
                "ALTER TABLE {t} ADD COLUMN rid INT GENERATED ALWAYS AS IDENTITY",
            ],
            read: "SELECT id, \"Size\", \"Color\", \"Weight\", note, g, CASE WHEN rid IS NOT NULL THEN 1 END FROM {t} ORDER BY id",
            kept: &["note", "g", "rid"],
            generated: true,
        },
    ));
}

#[test]
fn mariadb_a_merge_leaves_the_users_own_columns() {
    let db = mariadb();
    runtime().block_on(user_columns_are_kept(
        &db,
        &UserColumns {
            alter: &[
                "ALTER TABLE {t} ADD COLUMN note VARCHAR(20) DEFAULT 'dflt'",
                "UPDATE {t} SET note = 'mine'",
                "ALTER TABLE {t} ADD COLUMN g VARCHAR(30) AS (CONCAT(Size, '!')) PERSISTENT",
                "ALTER TABLE {t} ADD COLUMN rid INT NOT NULL AUTO_INCREMENT UNIQUE",
            ],
            read: "SELECT id, Size, Color, Weight, note, g, CASE WHEN rid > 0 THEN 1 END FROM {t} ORDER BY id",
            kept: &["note", "g", "rid"],
            generated: true,
        },
    ));
}

#[test]
fn mssql_a_merge_leaves_the_users_own_columns() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(user_columns_are_kept(
        &db,
        &UserColumns {
            alter: &[
                "ALTER TABLE {t} ADD note NVARCHAR(20) DEFAULT 'dflt'",
                "UPDATE {t} SET note = 'mine'",
                "ALTER TABLE {t} ADD rid INT IDENTITY(1, 1)",
            ],
            read: "SELECT id, Size, Color, Weight, note, '', CASE WHEN rid IS NOT NULL THEN 1 END FROM {t} ORDER BY id",
            kept: &["note", "rid"],
            generated: false,
        },
    ));
}

/// PostgreSQL and SQLite: `ON CONFLICT (id)` needs a unique key on exactly `id`.
async fn a_keyless_target_is_refused(db: &Db) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c = conn.as_mut();
    let prefix = format!("userkey{}", std::process::id());
    let (kv, target) = (format!("{prefix}_kv"), format!("{prefix}_wide"));
    let dir = tempfile::tempdir().expect("temp dir");
    let job = job(dir.path(), &prefix);
    drop_if_exists(c, &kv).await;
    execute_all(
        c,
        &[
            format!("CREATE TABLE {kv} (id INT, attr VARCHAR(20), val VARCHAR(20))"),
            format!("INSERT INTO {kv} VALUES (1, 'Size', 'M'), (2, 'Size', 'L')"),
        ],
    )
    .await;
    // The column as eavpivot names it: PostgreSQL folds an unquoted name.
    let size = if db.what == "postgres" {
        "\"Size\""
    } else {
        "Size"
    };
    for strategy in ["pushdown", "stream"] {
        let what = format!("{} {strategy}", db.what);
        drop_if_exists(c, &target).await;
        execute_all(
            c,
            &[
                format!("CREATE TABLE {target} (id INT, {size} TEXT)"),
                format!("INSERT INTO {target} VALUES (1, 'S')"),
            ],
        )
        .await;
        let before = fingerprint(c, &target).await;
        let out = run_strategy(&job, strategy, &db.url);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.contains(&format!("cannot merge into {target}"))
                && err
                    .contains("no primary key or unique index on exactly its entity columns (id)")
                && err.contains("CREATE UNIQUE INDEX")
                && err.contains("nothing was written"),
            "{what}: {err}"
        );
        assert_eq!(fingerprint(c, &target).await, before, "{what}");
        // With the key the message gives, the same merge goes through.
        execute_all(
            c,
            &[format!(
                "CREATE UNIQUE INDEX {target}_entity ON {target} (id)"
            )],
        )
        .await;
        let out = run_strategy(&job, strategy, &db.url);
        assert!(out.status.success(), "{what} keyed: {}", stderr(&out));
        let rows = text_rows(c, &format!("SELECT id, {size} FROM {target} ORDER BY id")).await;
        assert_eq!(rows, [["1", "M"], ["2", "L"]], "{what} keyed");
    }
    drop_if_exists(c, &target).await;
    drop_if_exists(c, &kv).await;
}

#[test]
fn sqlite_a_target_without_an_entity_key_is_refused_before_the_merge() {
    let db = sqlite();
    runtime().block_on(a_keyless_target_is_refused(&db));
}

#[test]
fn postgres_a_target_without_an_entity_key_is_refused_before_the_merge() {
    let db = postgres();
    runtime().block_on(a_keyless_target_is_refused(&db));
}

/// The eavpivot-made target of an integer entity is keyed by SQLite's rowid (`INTEGER
/// PRIMARY KEY` lists no index): it must still count as keyed.
#[test]
fn sqlite_an_integer_primary_key_counts_as_the_entity_key() {
    let db = sqlite();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let job = job(dir.path(), "rowid");
        execute_all(
            c,
            &[
                "CREATE TABLE rowid_kv (id INT, attr TEXT, val TEXT)".into(),
                "INSERT INTO rowid_kv VALUES (1, 'Size', 'M')".into(),
                "CREATE TABLE rowid_wide (id INTEGER PRIMARY KEY, Size TEXT)".into(),
                "INSERT INTO rowid_wide VALUES (1, 'S'), (5, 'L')".into(),
            ],
        )
        .await;
        let out = run_strategy(&job, "stream", &db.url);
        assert!(out.status.success(), "{}", stderr(&out));
        let rows = text_rows(c, "SELECT id, Size FROM rowid_wide ORDER BY id").await;
        assert_eq!(rows, [["1", "M"], ["5", "L"]]);
    });
}

/// `lower_case_table_names = 0` (Linux's default): `{P}_WIDE` is not `{p}_wide`. The catalog
/// compares names case-insensitively, and took the one for the other.
#[test]
fn mariadb_a_target_differing_only_in_case_is_another_table() {
    let db = mariadb();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let case_sensitive = text_rows(c, "SELECT @@lower_case_table_names").await;
        if case_sensitive != [["0"]] {
            eprintln!("skipped: lower_case_table_names is {case_sensitive:?}");
            return;
        }
        let prefix = format!("usercase{}", std::process::id());
        let (kv, lower, upper) = (
            format!("{prefix}_kv"),
            format!("{prefix}_wide"),
            format!("{}_WIDE", prefix.to_uppercase()),
        );
        let dir = tempfile::tempdir().expect("temp dir");
        execute_all(
            c,
            &[
                format!("DROP TABLE IF EXISTS {kv}, {lower}, {upper}"),
                format!("CREATE TABLE {kv} (id INT, attr VARCHAR(20), val VARCHAR(20))"),
                format!("INSERT INTO {kv} VALUES (1, 'Size', 'M'), (2, 'Size', 'L')"),
                format!("CREATE TABLE {upper} (id INT PRIMARY KEY, other LONGTEXT)"),
                format!("INSERT INTO {upper} VALUES (7, 'theirs')"),
            ],
        )
        .await;
        let before = fingerprint(c, &upper).await;
        for if_exists in ["merge", "replace", "fail"] {
            let _ = c.execute(&format!("DROP TABLE IF EXISTS {lower}")).await;
            let job = kv_job(dir.path(), &kv, &lower, if_exists);
            let out = run_strategy(&job, "stream", &db.url);
            assert!(out.status.success(), "{if_exists}: {}", stderr(&out));
            let rows = text_rows(c, &format!("SELECT id, Size FROM {lower} ORDER BY id")).await;
            assert_eq!(rows, [["1", "M"], ["2", "L"]], "{if_exists}");
            assert_eq!(
                fingerprint(c, &upper).await,
                before,
                "{if_exists}: {upper} changed"
            );
        }
        execute_all(c, &[format!("DROP TABLE IF EXISTS {kv}, {lower}, {upper}")]).await;
    });
}
