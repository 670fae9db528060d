//! Delta merges (issue 21): `source.changed` names the entities a merge re-pivots, each from
//! all its rows in the `where` scope, so an unchanged attribute keeps its value, a deleted
//! one becomes NULL (counted in `--json` `merged[].nulled`) and new entities are inserted;
//! the old pattern (`where` as the delta) is refused before commit instead of wiping the
//! attributes it did not read; and the preview after a merge shows the table as it is
//! (headers over their own values, the table's row count). SQLite, PostgreSQL and MariaDB,
//! both strategies, composite keys and a join in the source.

use crate::servers;

use std::collections::BTreeMap;
use std::path::PathBuf;

use eavpivot::backend::Backend;
use eavpivot::value::Value;
use servers::*;

/// "id1|id2" → column → value, NULLs left out.
type Wide = BTreeMap<String, BTreeMap<String, String>>;

async fn read_wide(db: &mut dyn Backend, what: &str, table: &str) -> Wide {
    let text = |v: &Value| v.as_text().unwrap_or_default();
    read_keyed(db, what, table, 2)
        .await
        .into_iter()
        .map(|(key, cells)| (format!("{}|{}", text(&key[0]), text(&key[1])), cells))
        .collect()
}

fn cells(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(c, v)| (c.to_string(), v.to_string()))
        .collect()
}

/// The delta job; `extra` is appended as it is (e.g. a `pivot:` line).
fn job(
    dir: &tempfile::TempDir,
    name: &str,
    p: &str,
    (key, delta): (&str, &str),
    extra: &str,
) -> PathBuf {
    let path = dir.path().join(format!("{name}.yaml"));
    std::fs::write(
        &path,
        format!(
            "name: {name}\n\
             source:\n  table: {p}_kv\n  alias: s\n  joins: [{{table: {p}_ent, alias: e, on: \"e.id1 = s.id1\"}}]\n  {key}: \"{delta}\"\n\
             entity: [s.id1, s.id2]\nattribute: s.attr\nvalue: s.val\n\
             target: {{table: {p}_wide, if_exists: merge}}\n{extra}"
        ),
    )
    .expect("write job");
    path
}

fn run_job(db: &Db, job: &std::path::Path, strategy: &str, since: &str) -> std::process::Output {
    let job = job.display().to_string();
    let var = format!("since={since}");
    run(
        &["run", &job, "--strategy", strategy, "--json", "--var", &var],
        &db.url,
    )
}

/// The first target's (inserted, updated, nulled) in a `--json` report.
fn merged(r: &serde_json::Value) -> (u64, u64, u64) {
    let m = &r["merged"][0];
    let n = |k: &str| {
        m[k].as_u64()
            .unwrap_or_else(|| panic!("no merged[0].{k} in {r}"))
    };
    (n("inserted"), n("updated"), n("nulled"))
}

fn report(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("--json report")
}

async fn delta_case(db: &Db, strategy: &str) {
    let Some(mut conn) = open(db).await else {
        return;
    };
    let c: &mut dyn Backend = conn.as_mut();
    let p = format!("mdl{}_{}_{strategy}", std::process::id(), db.what);
    let (kv, ent, wide) = (format!("{p}_kv"), format!("{p}_ent"), format!("{p}_wide"));
    for t in [&kv, &ent, &wide] {
        drop_if_exists(c, t).await;
    }
    for sql in [
        format!("CREATE TABLE {kv} (id1 INT, id2 VARCHAR(10), attr VARCHAR(20), val VARCHAR(40), modified INT)"),
        format!("CREATE TABLE {ent} (id1 INT, region VARCHAR(10))"),
        format!("INSERT INTO {ent} VALUES (1, 'n'), (2, 's'), (3, 'e')"),
        format!(
            "INSERT INTO {kv} VALUES (1, 'a', 'color', 'red', 1), (1, 'a', 'size', 'M', 1), (1, 'a', 'price', '7.50', 1), \
             (1, 'b', 'color', 'blue', 1), (1, 'b', 'size', 'L', 1), (2, 'a', 'color', 'black', 1), (2, 'a', 'size', 'S', 1)"
        ),
    ] {
        c.execute(&sql).await.expect(&sql);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let modified = "s.modified >= ${since}";
    let changed = job(&dir, "delta_changed", &p, ("changed", modified), "");
    let old_pattern = job(&dir, "delta_where", &p, ("where", modified), "");
    // A delta on the entity key alone: filtered directly on PostgreSQL (docs/guide.md).
    let by_key = job(&dir, "delta_key", &p, ("changed", "s.id1 = ${since}"), "");
    let what = format!("{} {strategy}", db.what);

    // The first merge into an absent target creates it from every entity in the scope, even
    // those the delta does not name (no row has modified >= 9).
    let r = report(&run_job(db, &changed, strategy, "9"));
    assert!(
        r["notes"]
            .to_string()
            .contains("first merge loads the whole scope"),
        "{r}"
    );
    let first = read_wide(c, db.what, &wide).await;
    assert_eq!(first.len(), 3, "{what}: {first:?}");

    // One value changes, one attribute is deleted, one entity is new.
    for sql in [
        format!("UPDATE {kv} SET val = 'green', modified = 2 WHERE id1 = 1 AND id2 = 'a' AND attr = 'color'"),
        format!("DELETE FROM {kv} WHERE id1 = 1 AND id2 = 'a' AND attr = 'size'"),
        format!("INSERT INTO {kv} VALUES (3, 'a', 'color', 'white', 2)"),
    ] {
        c.execute(&sql).await.expect(&sql);
    }
    let r = report(&run_job(db, &changed, strategy, "2"));
    assert_eq!(merged(&r), (1, 1, 1), "{what}: {r}");
    let sample = &r["merged"][0]["nulled_sample"][0];
    assert_eq!(
        sample["entity"],
        serde_json::json!(["1", "a"]),
        "{what}: {r}"
    );
    assert_eq!(
        (&sample["column"], &sample["previous"]),
        (&"size".into(), &"M".into()),
        "{what}: {r}"
    );
    let mut want = first.clone();
    want.insert(
        "1|a".into(),
        cells(&[("color", "green"), ("price", "7.50")]),
    );
    want.insert("3|a".into(), cells(&[("color", "white")]));
    let now = read_wide(c, db.what, &wide).await;
    assert_eq!(
        now, want,
        "{what}: the delta must keep what it did not change"
    );

    // The old pattern, `where` as the delta: refused before commit, the target as it was.
    c.execute(&format!(
        "UPDATE {kv} SET val = 'grey', modified = 3 WHERE id1 = 2 AND attr = 'color'"
    ))
    .await
    .expect("change");
    let out = run_job(db, &old_pattern, strategy, "3");
    let all = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{what}: {all}");
    // One line says it all.
    let err = all
        .lines()
        .find(|l| l.contains("merge refused"))
        .unwrap_or_else(|| panic!("{what}: {all}"));
    for part in [
        "merge refused",
        "column size of entity 2, a",
        "'S'",
        "outside source.where",
        "source.changed",
        "rolled back",
    ] {
        assert!(err.contains(part), "{what}: {part:?} not in {err}");
    }
    assert_eq!(
        read_wide(c, db.what, &wide).await,
        want,
        "{what}: refused merge wrote"
    );
    // The same delta written as `changed` goes through.
    report(&run_job(db, &changed, strategy, "3"));
    want.insert("2|a".into(), cells(&[("color", "grey"), ("size", "S")]));
    assert_eq!(read_wide(c, db.what, &wide).await, want, "{what}: changed");

    // A delta that names no entity is a day without changes: exit 0, nothing merged.
    let r = report(&run_job(db, &changed, strategy, "99"));
    assert_eq!(merged(&r), (0, 0, 0), "{what}: {r}");
    assert_eq!(
        read_wide(c, db.what, &wide).await,
        want,
        "{what}: empty delta"
    );

    // The delta on the key names entity 2 whatever its rows' `modified`: re-pivoted from all
    // its rows; a row whose key has a NULL part stays out, as it does through the IN.
    for sql in [
        format!("UPDATE {kv} SET val = 'XL' WHERE id1 = 2 AND attr = 'size'"),
        format!("INSERT INTO {kv} VALUES (2, NULL, 'weight', '9', 1)"),
    ] {
        c.execute(&sql).await.expect(&sql);
    }
    let r = report(&run_job(db, &by_key, strategy, "2"));
    // The plan says when the delta is read directly: PostgreSQL only (docs/guide.md).
    let direct = r["notes"].to_string().contains("filtered by it directly");
    assert_eq!(direct, db.what == "postgres", "{what}: {r}");
    assert_eq!(merged(&r), (0, 1, 0), "{what}: {r}");
    assert_eq!(
        r["merged"][0]["added_columns"],
        serde_json::json!([]),
        "{what}: {r}"
    );
    want.insert("2|a".into(), cells(&[("color", "grey"), ("size", "XL")]));
    assert_eq!(read_wide(c, db.what, &wide).await, want, "{what}: by key");

    // An entity the delta names whose every row lost its attribute name is re-pivoted like
    // any other, to no cell (as a whole merge does), even when it is the only one named: its
    // old cell is counted as set to NULL, not kept.
    c.execute(&format!(
        "UPDATE {kv} SET attr = '', modified = 4 WHERE id1 = 3"
    ))
    .await
    .expect("unname");
    let r = report(&run_job(db, &changed, strategy, "4"));
    assert_eq!(merged(&r), (0, 1, 1), "{what}: {r}");
    assert_eq!(r["skipped_empty_names"], 1, "{what}: {r}");
    want.insert("3|a".into(), cells(&[]));
    assert_eq!(read_wide(c, db.what, &wide).await, want, "{what}: unnamed");

    // The same when every row of the named entity has an excluded name: no column, not an
    // error. Entity 3|a gets its color back, then has only `secret`.
    let excluding = job(
        &dir,
        "delta_excluding",
        &p,
        ("changed", modified),
        "pivot: {exclude: [secret]}\n",
    );
    for (attr, since) in [("color", "5"), ("secret", "6")] {
        c.execute(&format!(
            "UPDATE {kv} SET attr = '{attr}', modified = {since} WHERE id1 = 3"
        ))
        .await
        .expect("rename");
        let r = report(&run_job(db, &excluding, strategy, since));
        let nulled = if attr == "secret" { 1 } else { 0 };
        assert_eq!(merged(&r), (0, 1, nulled), "{what} {attr}: {r}");
    }
    assert_eq!(read_wide(c, db.what, &wide).await, want, "{what}: excluded");

    let left = names(c, &(db.list_staging)(&p)).await;
    assert!(left.is_empty(), "{what}: staging tables left: {left:?}");
    for t in [&kv, &ent, &wide] {
        drop_if_exists(c, t).await;
    }
}

#[test]
fn sqlite_delta_merges() {
    let db = sqlite();
    runtime().block_on(async {
        delta_case(&db, "pushdown").await;
        delta_case(&db, "stream").await;
    });
}

#[test]
fn postgres_delta_merges() {
    let db = postgres();
    runtime().block_on(async {
        delta_case(&db, "pushdown").await;
        delta_case(&db, "stream").await;
    });
}

#[test]
fn mariadb_delta_merges() {
    let db = mariadb();
    runtime().block_on(async {
        delta_case(&db, "pushdown").await;
        delta_case(&db, "stream").await;
    });
}

/// `changed` outside a merge, and with `on_missing: delete`, is refused before anything runs.
#[test]
fn changed_is_refused_where_it_cannot_mean_a_delta() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (target, key) in [
        ("{table: w, if_exists: replace}", "source.changed"),
        (
            "{table: w, if_exists: merge, on_missing: delete}",
            "target.on_missing",
        ),
    ] {
        let path = dir.path().join("j.yaml");
        std::fs::write(
            &path,
            format!("name: j\nsource: {{table: kv, changed: \"m > 1\"}}\nentity: id\nattribute: a\nvalue: v\ntarget: {target}\n"),
        )
        .expect("write");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_eavpivot"))
            .args(["check", &path.display().to_string()])
            .output()
            .expect("run");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(key), "{key} not in {err}");
    }
}

/// After a merge the preview shows the table as it is: a column the merge added sits last in
/// the table, whatever the job's order, and its header stays over its values; the row count
/// is the table's, not the rows this run wrote.
#[test]
fn preview_after_merge_is_labelled_by_the_table() {
    let db = sqlite();
    runtime().block_on(async {
        let mut conn = db.open().await.expect("sqlite");
        let c: &mut dyn Backend = conn.as_mut();
        for sql in [
            "CREATE TABLE kv (id INT, attr TEXT, val TEXT)",
            "INSERT INTO kv VALUES (1, 'size', 'XL'), (2, 'size', 'S'), (3, 'size', 'M')",
        ] {
            c.execute(sql).await.expect(sql);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.yaml");
        std::fs::write(
            &path,
            "name: p\nsource: {table: kv, alias: s, where: \"s.id >= ${from}\"}\nentity: s.id\nattribute: s.attr\nvalue: s.val\ntarget: {table: wide, if_exists: merge}\n",
        )
        .expect("write");
        let preview = |from: &str| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_eavpivot"))
                .args(["run", &path.display().to_string(), "--connection", &db.url])
                .args(["--var", &format!("from={from}"), "--preview", "10"])
                .output()
                .expect("run");
            assert!(out.status.success(), "{}", stderr(&out));
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        preview("0");
        // "Energy class" sorts before "size" in the job's order but is added after it.
        c.execute("INSERT INTO kv VALUES (3, 'Energy class', 'A')")
            .await
            .expect("insert");
        let shown = preview("3");
        assert!(shown.contains("(3 rows in all)"), "{shown}");
        let lines: Vec<&str> = shown.lines().collect();
        let header: Vec<&str> = lines[1].split('|').map(str::trim).collect();
        assert_eq!(header, ["id", "size", "Energy class"], "{shown}");
        let row3: Vec<&str> = lines
            .iter()
            .find(|l| l.starts_with('3'))
            .expect("row 3")
            .split('|')
            .map(str::trim)
            .collect();
        assert_eq!(row3, ["3", "M", "A"], "{shown}");
    });
}

/// Issue 17.4: on MariaDB a merge that adds columns goes into a copy swapped in after commit.
/// Another session's UPDATE committed between the copy and the swap must not be swapped away:
/// the swap is undone and the merge refused, and the write is in the table.
#[test]
fn mariadb_write_between_copy_and_swap_is_kept() {
    let db = mariadb();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c: &mut dyn Backend = conn.as_mut();
        let p = format!("mcw{}", std::process::id());
        let (kv, wide) = (format!("{p}_kv"), format!("{p}_wide"));
        for t in [&kv, &wide] {
            drop_if_exists(c, t).await;
        }
        for sql in [
            format!("CREATE TABLE {kv} (id INT, attr VARCHAR(20), val VARCHAR(40))"),
            format!("INSERT INTO {kv} VALUES (1, 'a01', 'x'), (2, 'a01', 'y')"),
        ] {
            c.execute(&sql).await.expect(&sql);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("w.yaml");
        std::fs::write(
            &path,
            format!("name: w\nsource: {{table: {kv}, alias: s}}\nentity: s.id\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {wide}, if_exists: merge}}\n"),
        )
        .expect("write");
        let job = path.display().to_string();
        let args = ["run", job.as_str(), "--strategy", "pushdown"];
        let first = run(&args, &db.url);
        assert!(first.status.success(), "{}", stderr(&first));
        // A new attribute: the merge goes into a copy with the new column.
        c.execute(&format!("INSERT INTO {kv} VALUES (1, 'a02', 'new')"))
            .await
            .expect("insert");
        let resume = dir.path().join("resume");
        let (mut child, said) = start_resumable(&args, &db.url, "committed", Some(&resume));
        c.execute(&format!("UPDATE {wide} SET a01 = 'APP-WRITE' WHERE id = 2"))
            .await
            .expect("the other session's write");
        std::fs::write(&resume, b"").expect("resume");
        let status = child.wait().expect("wait");
        let err = said_after(&said);
        assert_eq!(status.code(), Some(1), "{status:?} {err:#?}");
        assert!(
            err.iter().any(|l| l.contains("another session wrote to")),
            "{err:#?}"
        );
        let now = read_table(c, "mariadb", &wide).await;
        assert_eq!(now[&2]["a01"], "APP-WRITE", "the write was swapped away");
        assert!(!now[&1].contains_key("a02"), "the refused merge is in place");
        let left = names(c, &(db.list_staging)(&p)).await;
        assert!(left.is_empty(), "staging tables left: {left:?}");
        // Run again: the merge goes through (and sets a01 from the source, as a merge does).
        let again = run(&args, &db.url);
        assert!(again.status.success(), "{}", stderr(&again));
        let now = read_table(c, "mariadb", &wide).await;
        assert_eq!(now[&1]["a02"], "new");
        for t in [&kv, &wide] {
            drop_if_exists(c, t).await;
        }
    });
}

/// A connection to `db`; SQL Server's with the password from `EAVPIVOT_PASSWORD`.
async fn open(db: &Db) -> Option<Box<dyn Backend>> {
    if db.what != "mssql" {
        return db.open().await;
    }
    let spec = eavpivot::backend::ConnectionSpec::parse(Some(&db.url)).expect("url");
    let options = eavpivot::backend::ConnectOptions {
        password: std::env::var("EAVPIVOT_PASSWORD").ok(),
        ..Default::default()
    };
    Some(
        eavpivot::backend::connect(&spec, &options)
            .await
            .expect("EAVPIVOT_MSSQL_URL is set but unreachable"),
    )
}

/// SQL Server (Babelfish here) when `EAVPIVOT_MSSQL_URL` names one (password in
/// `EAVPIVOT_PASSWORD`); otherwise skipped, saying so.
#[test]
fn mssql_delta_merges() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(async {
        delta_case(&db, "pushdown").await;
        delta_case(&db, "stream").await;
    });
}

/// Across two databases (SQLite source, PostgreSQL target, the stream): the delta keeps what
/// it did not change, and the old pattern's check reads the source, not the target.
#[test]
fn delta_merge_across_databases() {
    let (src, pg) = (sqlite(), postgres());
    runtime().block_on(async {
        let (Some(mut s), Some(mut t)) = (src.open().await, pg.open().await) else {
            return;
        };
        let wide = format!("mdx{}_wide", std::process::id());
        drop_if_exists(t.as_mut(), &wide).await;
        for sql in [
            "CREATE TABLE kv (id INT, attr TEXT, val TEXT, modified INT)",
            "INSERT INTO kv VALUES (1, 'color', 'red', 1), (1, 'size', 'M', 1), (2, 'color', 'blue', 1)",
        ] {
            s.execute(sql).await.expect(sql);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let job = |key: &str| {
            let path = dir.path().join(format!("{key}.yaml"));
            std::fs::write(
                &path,
                format!("name: x\nsource: {{table: kv, alias: s, {key}: \"s.modified >= ${{since}}\"}}\nentity: s.id\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {wide}, if_exists: merge}}\n"),
            )
            .expect("write");
            path.display().to_string()
        };
        let (changed, old) = (job("changed"), job("where"));
        let go = |job: &str, since: &str| {
            let var = format!("since={since}");
            run(
                &["run", job, "--var", &var, "--target-connection", &pg.url],
                &src.url,
            )
        };
        let first = go(&changed, "0");
        assert!(first.status.success(), "{}", stderr(&first));
        s.execute("UPDATE kv SET val = 'green', modified = 2 WHERE id = 1 AND attr = 'color'")
            .await
            .expect("update");
        let refused = go(&old, "2");
        assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
        assert!(stderr(&refused).contains("still holds 'M'"), "{}", stderr(&refused));
        let delta = go(&changed, "2");
        assert!(delta.status.success(), "{}", stderr(&delta));
        let now = read_table(t.as_mut(), "postgres", &wide).await;
        assert_eq!(now[&1], cells(&[("color", "green"), ("size", "M")]));
        assert_eq!(now[&2], cells(&[("color", "blue")]));
        drop_if_exists(t.as_mut(), &wide).await;
    });
}
