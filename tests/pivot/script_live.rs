//! The standalone scripts run end to end on the real servers, through the clients a DBA would
//! use (`psql -f`, `mariadb < file`), and give the same table, cell by cell, as `eavpivot run`
//! on the same data, hostile attribute names included (quotes, backticks, `]`, `%`, unicode,
//! a dollar-quote tag, and on PostgreSQL case-only differences and trailing spaces). MariaDB
//! must refuse case-only differences and trailing spaces, PostgreSQL names over 63 bytes, and
//! a refused script leaves the previous target as it was and no staging table behind.
//!
//! Servers come from `EAVPIVOT_PG_URL` / `EAVPIVOT_MARIADB_URL` (default: the local ones).
//! An unreachable server, or a missing client program, skips with the reason printed unless
//! `EAVPIVOT_REQUIRE_SERVERS=1`.

use std::path::Path;
use std::process::{Command, Stdio};

use eavpivot::backend::{self, Backend, ConnectOptions, ConnectionSpec};
use eavpivot::config;
use eavpivot::dialect::script::{self, ScriptOptions};
use eavpivot::execute::{run_job, RunOptions};

const PG_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const MARIADB_URL: &str = "mariadb://root@127.0.0.1:3306/test";

/// Names every database must pivot as they are.
const HOSTILE: &[&str] = &[
    "it's \"quoted\"",
    "back`tick``",
    "br]acket[",
    "50% off",
    "naïve 日本語 Ω",
    "semi; -- comment",
    "$eavpivot$",
    "back\\slash",
    "Color",
];

fn required() -> bool {
    std::env::var("EAVPIVOT_REQUIRE_SERVERS").as_deref() == Ok("1")
}

fn skip(why: String) {
    assert!(!required(), "EAVPIVOT_REQUIRE_SERVERS=1 but {why}");
    eprintln!("skipped: {why}");
}

async fn connect(url: &str) -> Result<Box<dyn Backend>, String> {
    let spec = ConnectionSpec::parse(Some(url)).map_err(|e| e.to_string())?;
    let options = ConnectOptions {
        connect_timeout: std::time::Duration::from_secs(5),
        password: None,
    };
    backend::connect(&spec, &options)
        .await
        .map_err(|e| format!("{} is unreachable: {e}", spec.display()))
}

/// How to feed a script file to the server's own client.
#[derive(Clone, Copy)]
enum Client {
    Psql,
    Mariadb,
}

impl Client {
    fn program(self) -> &'static str {
        match self {
            Client::Psql => "psql",
            Client::Mariadb => "mariadb",
        }
    }

    /// Run the file; Ok(stdout + stderr) or Err(stderr).
    fn run(self, url: &str, file: &Path) -> Result<String, String> {
        let mut cmd = Command::new(self.program());
        match self {
            Client::Psql => {
                cmd.args([url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f"])
                    .arg(file);
            }
            Client::Mariadb => {
                // mariadb://user[:password]@host:port/db; the password goes by environment.
                let rest = url.split_once("://").map_or(url, |(_, r)| r);
                let (auth, place) = rest.rsplit_once('@').unwrap_or(("root", rest));
                let (user, password) = auth.split_once(':').unwrap_or((auth, ""));
                let (host_port, db) = place.split_once('/').unwrap_or((place, "test"));
                let (host, port) = host_port.split_once(':').unwrap_or((host_port, "3306"));
                cmd.args(["-h", host, "-P", port, "-u", user, db])
                    .env("MYSQL_PWD", password)
                    .stdin(std::fs::File::open(file).map_err(|e| e.to_string())?);
            }
        }
        let out = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("{} could not start: {e}", self.program()))?;
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        match out.status.success() {
            true => Ok(format!("{}{stderr}", String::from_utf8_lossy(&out.stdout))),
            false => Err(stderr),
        }
    }

    fn available(self) -> bool {
        Command::new(self.program())
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }
}

struct Tables {
    source: String,
    wide: String,
    reference: String,
}

impl Tables {
    fn new(tag: &str) -> Tables {
        let pid = std::process::id();
        Tables {
            source: format!("eavp_script_{tag}_src_{pid}"),
            wide: format!("eavp_script_{tag}_wide_{pid}"),
            reference: format!("eavp_script_{tag}_run_{pid}"),
        }
    }

    async fn drop_all(&self, db: &mut dyn Backend) {
        for t in [&self.source, &self.wide, &self.reference] {
            let _ = db.execute(&format!("DROP TABLE IF EXISTS {t}")).await;
            let _ = db
                .execute(&format!("DROP TABLE IF EXISTS {t}__eavpivot_new"))
                .await;
        }
    }
}

/// A source of three entities with `names` as attributes; some cells left out.
async fn fill_source(db: &mut dyn Backend, tables: &Tables, names: &[&str]) {
    let d = db.dialect();
    let _ = db
        .execute(&format!("DROP TABLE IF EXISTS {}", tables.source))
        .await;
    db.execute(&format!(
        "CREATE TABLE {} (id INTEGER NOT NULL, attr VARCHAR(200), val VARCHAR(200))",
        tables.source
    ))
    .await
    .expect("create source");
    let mut rows = Vec::new();
    for id in 1..=3i64 {
        for (i, name) in names.iter().enumerate() {
            if (id as usize + i).is_multiple_of(4) {
                continue;
            }
            let value = format!("{name} = {id} ' \\ ` ]");
            rows.push(format!(
                "({id}, {}, {})",
                d.quote_literal(name),
                d.quote_literal(&value)
            ));
        }
    }
    db.execute(&format!(
        "INSERT INTO {} (id, attr, val) VALUES {}",
        tables.source,
        rows.join(", ")
    ))
    .await
    .expect("insert source");
}

/// `tables.source` made as `(columns)` holding `rows` (a `VALUES` list).
async fn make_source(db: &mut dyn Backend, tables: &Tables, columns: &str, rows: &str) {
    let create = format!("CREATE TABLE {} ({columns})", tables.source);
    db.execute(&create).await.expect("create source");
    let insert = format!("INSERT INTO {} VALUES {rows}", tables.source);
    db.execute(&insert).await.expect("insert source");
}

fn job(dir: &Path, source: &str, target: &str) -> config::Job {
    let path = dir.join(format!("{target}.yaml"));
    let text = format!(
        "name: script_live\nsource:\n  table: {source}\nentity: [id]\nattribute: attr\nvalue: val\n\
         pivot:\n  column_type: text\ntarget:\n  table: {target}\n  if_exists: replace\n"
    );
    std::fs::write(&path, text).expect("job file");
    config::load_job(&path).expect("job valid")
}

/// Every row of `table`, columns `names` (quoted), ordered by id, as text.
async fn cells(db: &mut dyn Backend, table: &str, names: &[&str]) -> Result<Vec<String>, String> {
    let d = db.dialect();
    let cols: Vec<String> = names.iter().map(|n| d.quote_ident(n)).collect();
    let rows = db
        .query(&format!(
            "SELECT id, {} FROM {table} ORDER BY id",
            cols.join(", ")
        ))
        .await
        .map_err(|e| e.to_string())?;
    Ok(rows.iter().map(|r| format!("{r:?}")).collect())
}

/// Run `job`'s script through `client`; Err(the client's stderr) when it fails.
fn run_script(
    db: &dyn Backend,
    client: Client,
    url: &str,
    dir: &Path,
    job: &config::Job,
) -> Result<String, String> {
    let text = script::render(
        db.dialect(),
        &eavpivot::plan::script_plan(job),
        ScriptOptions::default(),
    )
    .expect("script");
    let file = dir.join(format!("{}.sql", db.dialect().name()));
    std::fs::write(&file, text).expect("script file");
    client.run(url, &file)
}

/// `eavpivot run` into `tables.reference`, then the script into `tables.wide`: what the
/// script's client said, or its error.
async fn run_then_script(
    db: &mut dyn Backend,
    client: Client,
    url: &str,
    dir: &Path,
    tables: &Tables,
) -> Result<String, String> {
    let reference = job(dir, &tables.source, &tables.reference);
    run_job(&reference, db, &RunOptions::default())
        .await
        .expect("eavpivot run");
    run_script(
        db,
        client,
        url,
        dir,
        &job(dir, &tables.source, &tables.wide),
    )
}

/// The script's table equals `eavpivot run`'s, cell by cell.
async fn same_as_run(db: &mut dyn Backend, client: Client, url: &str, names: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tables = Tables::new("same");
    fill_source(db, &tables, names).await;
    let reference = job(dir.path(), &tables.source, &tables.reference);
    run_job(&reference, db, &RunOptions::default())
        .await
        .expect("eavpivot run");
    let scripted = job(dir.path(), &tables.source, &tables.wide);
    let said = run_script(db, client, url, dir.path(), &scripted);
    let want = cells(db, &tables.reference, names).await;
    let got = cells(db, &tables.wide, names).await;
    tables.drop_all(db).await;
    let said = said.unwrap_or_else(|e| panic!("{} script failed: {e}", client.program()));
    assert!(said.contains("now holds 3 rows"), "{said}");
    let want = want.expect("run's table");
    assert_eq!(want.len(), 3, "three entities");
    assert_eq!(got.expect("script's table"), want, "script vs run");
}

/// A refused script: the message names the reason, the old target and no staging table remain.
async fn refused(db: &mut dyn Backend, client: Client, url: &str, names: &[&str], want: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tables = Tables::new("refuse");
    fill_source(db, &tables, &names[..1]).await;
    let scripted = job(dir.path(), &tables.source, &tables.wide);
    let first = run_script(db, client, url, dir.path(), &scripted);
    let before = cells(db, &tables.wide, &names[..1]).await;
    fill_source(db, &tables, names).await;
    let second = run_script(db, client, url, dir.path(), &scripted);
    let after = cells(db, &tables.wide, &names[..1]).await;
    let staging = db
        .query(&format!(
            "SELECT COUNT(*) FROM {}__eavpivot_new",
            tables.wide
        ))
        .await;
    tables.drop_all(db).await;
    first.unwrap_or_else(|e| panic!("first script failed: {e}"));
    let err = second.expect_err("the script must refuse");
    assert!(err.contains(want), "expected '{want}' in: {err}");
    assert_eq!(after, before, "the refused script changed the target");
    assert!(staging.is_err(), "a staging table was left behind");
}

async fn server(
    what: &str,
    env: &str,
    default: &str,
    client: Client,
) -> Option<(Box<dyn Backend>, String)> {
    let url = std::env::var(env).unwrap_or_else(|_| default.into());
    if !client.available() {
        skip(format!("the {} client is not installed", client.program()));
        return None;
    }
    match connect(&url).await {
        Ok(db) => Some((db, url)),
        Err(e) => {
            skip(format!("{what}: {e}"));
            None
        }
    }
}

#[tokio::test]
async fn postgres_script_matches_run_and_refuses_long_names() {
    let Some((mut db, url)) = server("PostgreSQL", "EAVPIVOT_PG_URL", PG_URL, Client::Psql).await
    else {
        return;
    };
    let mut names = HOSTILE.to_vec();
    names.extend(["color", "Color ", "COLOR"]);
    same_as_run(db.as_mut(), Client::Psql, &url, &names).await;
    let long = "x".repeat(60) + "ééé";
    refused(
        db.as_mut(),
        Client::Psql,
        &url,
        &["ok", &long],
        "longer than 63 bytes",
    )
    .await;
}

/// The MariaDB server and its URL, with the `mariadb` client at hand.
async fn mariadb() -> Option<(Box<dyn Backend>, String)> {
    let (env, url) = ("EAVPIVOT_MARIADB_URL", MARIADB_URL);
    server("MariaDB", env, url, Client::Mariadb).await
}

#[tokio::test]
async fn mariadb_script_matches_run_and_refuses_what_mariadb_cannot_tell_apart() {
    let Some((mut db, url)) = mariadb().await else {
        return;
    };
    same_as_run(db.as_mut(), Client::Mariadb, &url, HOSTILE).await;
    refused(
        db.as_mut(),
        Client::Mariadb,
        &url,
        &["Color", "color"],
        "the same identifier to MariaDB",
    )
    .await;
    refused(
        db.as_mut(),
        Client::Mariadb,
        &url,
        &["Color", "Color "],
        "ending in a space",
    )
    .await;
    keeps_a_table_named_like_its_staging_table(db.as_mut(), &url).await;
    refuses_keys_one_under_the_collation(db.as_mut(), &url).await;
}

/// `k` and `K` are one key to MariaDB's default collation: the script refuses, as `eavpivot
/// run` does, instead of making one row of them, and no target or staging table is left.
async fn refuses_keys_one_under_the_collation(db: &mut dyn Backend, url: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tables = Tables::new("twins");
    tables.drop_all(db).await;
    make_source(
        db,
        &tables,
        "id VARCHAR(10) NOT NULL, attr VARCHAR(10), val VARCHAR(10)",
        "('k', 'a', '1'), ('K', 'b', '2'), ('j', 'a', '3')",
    )
    .await;
    let scripted = job(dir.path(), &tables.source, &tables.wide);
    let said = run_script(db, Client::Mariadb, url, dir.path(), &scripted);
    let left = db
        .query(&format!("SELECT COUNT(*) FROM {}", tables.wide))
        .await;
    tables.drop_all(db).await;
    let err = said.expect_err("the script must refuse k and K");
    assert!(err.contains("one key to the collation"), "{err}");
    assert!(left.is_err(), "the refused script left a target");
}

/// A user's table named `<target>__eavpivot_new` is refused, never dropped (issue 10 defect 4,
/// in the script as in `eavpivot run`).
async fn keeps_a_table_named_like_its_staging_table(db: &mut dyn Backend, url: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tables = Tables::new("own");
    fill_source(db, &tables, &["Color"]).await;
    let users = format!("{}__eavpivot_new", tables.wide);
    db.execute(&format!(
        "CREATE TABLE {users} (id INT PRIMARY KEY, x TEXT)"
    ))
    .await
    .expect("user table");
    db.execute(&format!("INSERT INTO {users} VALUES (1, 'mine')"))
        .await
        .expect("user row");
    let scripted = job(dir.path(), &tables.source, &tables.wide);
    let result = run_script(db, Client::Mariadb, url, dir.path(), &scripted);
    let kept = db.query(&format!("SELECT x FROM {users}")).await;
    let target = db
        .query(&format!("SELECT COUNT(*) FROM {}", tables.wide))
        .await;
    tables.drop_all(db).await;
    let err = result.expect_err("the script must refuse");
    assert!(
        err.contains("never drops a table it did not create"),
        "{err}"
    );
    let kept = kept.expect("the user's table is still there");
    assert_eq!(kept.len(), 1, "and keeps its row");
    assert!(target.is_err(), "no target was made");
}

/// Under a nondeterministic collation or `citext`, `Color` and `color` are one name to `=` and
/// `GROUP BY`, and `k` and `K` one key: the PostgreSQL script used to make one column of the
/// names (keeping `red`, dropping `blue`) and one row of the keys, and said it succeeded. Now
/// it keeps the names apart, orders `red`/`Red` by bytes (as `eavpivot run` does), gives the
/// same table as `run`, and refuses the keys before writing anything.
#[tokio::test]
async fn postgres_script_keeps_names_apart_and_refuses_keys_one_under_the_collation() {
    use crate::servers::{ScratchDatabase, CASE_INSENSITIVE_COLLATION, CITEXT};
    if !Client::Psql.available() {
        skip("the psql client is not installed".into());
        return;
    }
    for (setup, text) in [
        (CASE_INSENSITIVE_COLLATION, "TEXT COLLATE ci"),
        (CITEXT, "citext"),
    ] {
        let Some((_scratch, server)) = ScratchDatabase::create("scriptci", &[setup]).await else {
            return;
        };
        let mut db = connect(&server.url).await.expect("scratch database");
        let db = db.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let tables = Tables::new("ci");
        make_source(
            db,
            &tables,
            &format!("id {text} NOT NULL, attr {text}, val {text}"),
            "('k', 'Color', 'red'), ('k', 'color', 'blue'), ('k', 'Color', 'Red'), ('j', 'size', '1')",
        )
        .await;
        let names = ["Color", "color", "size"];
        let said = run_then_script(db, Client::Psql, &server.url, dir.path(), &tables).await;
        let said = said.unwrap_or_else(|e| panic!("{text}: script failed: {e}"));
        assert!(said.contains("now holds 2 rows"), "{text}: {said}");
        let got = cells(db, &tables.wide, &names)
            .await
            .expect("script's table");
        let want = cells(db, &tables.reference, &names)
            .await
            .expect("run's table");
        assert_eq!(got, want, "{text}: script vs run");
        let k = got.iter().find(|r| r.contains("\"k\"")).expect("row k");
        for cell in ["\"red\"", "\"blue\""] {
            assert!(k.contains(cell), "{text}: {cell} lost: {got:?}");
        }

        db.execute(&format!(
            "INSERT INTO {} VALUES ('K', 'size', '2')",
            tables.source
        ))
        .await
        .expect("a key twin");
        let scripted = job(dir.path(), &tables.source, &tables.wide);
        let refused = run_script(db, Client::Psql, &server.url, dir.path(), &scripted);
        let err = refused.expect_err("the script must refuse k and K");
        assert!(err.contains("one key to the collation"), "{text}: {err}");
        let after = cells(db, &tables.wide, &names).await.expect("target kept");
        assert_eq!(after, want, "{text}: the refused script changed the target");

        // A numeric key is one key as run sees it: 1.0 and 1.00 are not twins.
        let numeric = Tables::new("cinum");
        make_source(
            db,
            &numeric,
            &format!("id NUMERIC NOT NULL, attr {text}, val {text}"),
            "(1.0, 'Color', 'red'), (1.00, 'size', 'L')",
        )
        .await;
        let said = run_then_script(db, Client::Psql, &server.url, dir.path(), &numeric).await;
        let said = said.unwrap_or_else(|e| panic!("{text}: numeric key refused: {e}"));
        assert!(said.contains("now holds 1 rows"), "{text}: {said}");
        let got = cells(db, &numeric.wide, &["Color", "size"]).await;
        let want = cells(db, &numeric.reference, &["Color", "size"]).await;
        numeric.drop_all(db).await;
        assert_eq!(got.expect("script's table"), want.expect("run's table"));
    }
}

/// Conflicting values (`red`/`Red`, `a`/`B`) keep the value `eavpivot run` keeps: by bytes.
/// MariaDB's default collation orders `a` before `B` and leaves `Red` and `red` unordered, so
/// the script's `MAX` kept `B`, and `Red` or `red` by the order rows were read. An integer
/// value still takes its numeric maximum (10 over 9), as `run`'s does.
#[tokio::test]
async fn mariadb_script_keeps_the_conflicting_value_run_keeps() {
    let Some((mut db, url)) = mariadb().await else {
        return;
    };
    let db = db.as_mut();
    for (value_type, rows, want) in [
        (
            "VARCHAR(10)",
            "(1, 'a', 'red'), (1, 'a', 'Red'), (2, 'a', 'B'), (2, 'a', 'a'), (3, 'a', 'Red'), (3, 'a', 'red')",
            ["red", "a", "red"].as_slice(),
        ),
        ("INT", "(1, 'a', 9), (1, 'a', 10)", ["10"].as_slice()),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let tables = Tables::new("conflict");
        tables.drop_all(db).await;
        let columns = format!("id INTEGER NOT NULL, attr VARCHAR(10), val {value_type}");
        make_source(db, &tables, &columns, rows).await;
        let said = run_then_script(db, Client::Mariadb, &url, dir.path(), &tables).await;
        let got = cells(db, &tables.wide, &["a"]).await;
        let reference = cells(db, &tables.reference, &["a"]).await;
        tables.drop_all(db).await;
        said.unwrap_or_else(|e| panic!("{value_type}: script failed: {e}"));
        let (got, reference) = (got.expect("script's table"), reference.expect("run's table"));
        assert_eq!(got, reference, "{value_type}: script vs run");
        assert_eq!(got.len(), want.len(), "{value_type}: rows {got:?}");
        for (row, value) in got.iter().zip(want) {
            assert!(row.contains(&format!("\"{value}\"")), "{value_type}: {got:?}");
        }
    }
}

/// In a schema whose default character set is `latin1`, the script's staging table took it:
/// `☃` failed the script (or became `?` where `sql_mode` is not strict). The script creates it
/// in `utf8mb4` as `eavpivot run` does, and every value reads back with its bytes; so does
/// the column name `naïve ☃` (the script's variables took latin1 too: found by the
/// differential harness's `mariadb_latin1` leg).
#[tokio::test]
async fn mariadb_script_holds_every_value_in_a_latin1_schema() {
    let Some((mut admin, url)) = mariadb().await else {
        return;
    };
    let database = format!("script_l1_{}", std::process::id());
    for sql in [
        format!("DROP DATABASE IF EXISTS {database}"),
        format!("CREATE DATABASE {database} CHARACTER SET latin1"),
    ] {
        admin.execute(&sql).await.expect(&sql);
    }
    let (server, _) = url.rsplit_once('/').expect("a database in the URL");
    let url = format!("{server}/{database}");
    let mut db = connect(&url).await.expect("the latin1 database");
    let dir = tempfile::tempdir().expect("temp dir");
    let tables = Tables::new("latin1");
    let values = ["é", "☃", "😀"];
    let rows: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("({}, 'naïve ☃', '{v}')", i + 1))
        .collect();
    make_source(
        db.as_mut(),
        &tables,
        "id INT NOT NULL, attr VARCHAR(10) CHARACTER SET utf8mb4, val VARCHAR(10) CHARACTER SET utf8mb4",
        &rows.join(", "),
    )
    .await;
    let scripted = job(dir.path(), &tables.source, &tables.wide);
    let said = run_script(db.as_ref(), Client::Mariadb, &url, dir.path(), &scripted);
    let got = db
        .query(&format!(
            "SELECT HEX(`naïve ☃`) FROM {} ORDER BY id",
            tables.wide
        ))
        .await;
    drop(db);
    admin
        .execute(&format!("DROP DATABASE {database}"))
        .await
        .expect("drop the database");
    let said = said.unwrap_or_else(|e| panic!("the script failed: {e}"));
    let got: Vec<String> = got
        .expect("the script's table")
        .iter()
        .filter_map(|r| r.first().and_then(|v| v.as_text()))
        .collect();
    let want: Vec<String> = values
        .iter()
        .map(|v| crate::servers::upper_hex(v))
        .collect();
    assert_eq!(got, want, "{said}");
}

/// A database set as legacy ones are (`extra_float_digits = 0`, the default before
/// PostgreSQL 12; `DateStyle = 'SQL, DMY'`): the script's pivot writes float8 and date values
/// into text columns through the server's output functions, so `psql -f` wrote `0.3` for
/// 0.30000000000000004. The script sets `eavpivot run`'s output formats for its own
/// transaction (`set_config(…, true)`), and the user's session keeps its settings after it.
#[tokio::test]
async fn postgres_script_writes_exact_text_under_legacy_output_settings() {
    let setup = ["DO $$ BEGIN \
         EXECUTE format('ALTER DATABASE %I SET extra_float_digits = 0', current_database()); \
         EXECUTE format('ALTER DATABASE %I SET DateStyle = ''SQL, DMY''', current_database()); \
         END $$"];
    if !Client::Psql.available() {
        skip("the psql client is not installed".into());
        return;
    }
    let Some((_scratch, scratch)) =
        crate::servers::ScratchDatabase::create("scriptfmt", &setup).await
    else {
        return;
    };
    let mut db = connect(&scratch.url).await.expect("the scratch database");
    let tables = Tables::new("legacyfmt");
    tables.drop_all(db.as_mut()).await;
    make_source(
        db.as_mut(),
        &tables,
        "id INTEGER, attr TEXT, val FLOAT8",
        "(1, 'a', 0.1::float8 + 0.2), (1, 'b', 123456.78901234567), (2, 'a', 1.0000000000000002)",
    )
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let job = job(dir.path(), &tables.source, &tables.wide);
    let said = run_script(db.as_ref(), Client::Psql, &scratch.url, dir.path(), &job);
    assert!(said.is_ok(), "{said:?}");
    let got = crate::servers::text_rows(
        db.as_mut(),
        &format!(
            "SELECT id::text, a, COALESCE(b, '') FROM {} ORDER BY id",
            tables.wide
        ),
    )
    .await;
    assert_eq!(
        got,
        [
            ["1", "0.30000000000000004", "123456.78901234567"],
            ["2", "1.0000000000000002", ""]
        ]
    );
    // In the same psql session, after the script, the database's own settings hold again.
    let script = std::fs::read_to_string(dir.path().join("postgres.sql")).expect("the script");
    let file = dir.path().join("after.sql");
    std::fs::write(
        &file,
        format!("{script}SELECT 0.1::float8 + 0.2 AS after;\n"),
    )
    .expect("file");
    let after = Client::Psql.run(&scratch.url, &file).expect("psql");
    assert!(after.contains("\n   0.3\n"), "{after}");
    tables.drop_all(db.as_mut()).await;
}
