//! Shared by the test binaries that need live servers (faults, merge, sudoku_job,
//! conflicts_export): where the servers are, how to reach them or skip with the reason
//! printed (a failure under `EAVPIVOT_REQUIRE_SERVERS=1`), and how to run, pause and kill
//! the real binary.
#![allow(dead_code)] // each test binary uses its own subset

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use eavpivot::backend::{self, Backend, ConnectOptions, ConnectionSpec};
use eavpivot::value::Value;

/// One backend under test: where it is, and the few statements that differ.
pub struct Db {
    pub what: &'static str,
    pub url: String,
    /// Lists tables whose name contains `eavpivot` and starts with the given prefix.
    pub list_staging: fn(&str) -> String,
    pub _dir: Option<tempfile::TempDir>,
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

pub fn sqlite() -> Db {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("faults.db");
    std::fs::write(&path, b"").expect("create db file");
    Db {
        what: "sqlite",
        url: format!("sqlite:{}", path.display()),
        list_staging: |p| format!("SELECT name FROM sqlite_master WHERE name LIKE '{p}%eavpivot%'"),
        _dir: Some(dir),
    }
}

pub fn postgres() -> Db {
    Db {
        what: "postgres",
        url: std::env::var("EAVPIVOT_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into()),
        list_staging: |p| {
            format!("SELECT tablename::text FROM pg_tables WHERE tablename LIKE '{p}%eavpivot%'")
        },
        _dir: None,
    }
}

pub fn mariadb() -> Db {
    Db {
        what: "mariadb",
        url: std::env::var("EAVPIVOT_MARIADB_URL")
            .unwrap_or_else(|_| "mariadb://root@127.0.0.1:3306/test".into()),
        list_staging: |p| {
            format!(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE '{p}%eavpivot%'"
            )
        },
        _dir: None,
    }
}

/// SQL Server at `EAVPIVOT_MSSQL_URL`, its password in `EAVPIVOT_PASSWORD` (README, SQL
/// Server: the live suite), or `None` with the reason printed when the variable is unset —
/// a failure under `EAVPIVOT_REQUIRE_SERVERS=1`, as an unreachable server is.
pub fn mssql_url() -> Option<String> {
    match std::env::var("EAVPIVOT_MSSQL_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if required() => panic!(
            "SQL Server is required (EAVPIVOT_REQUIRE_SERVERS=1) but EAVPIVOT_MSSQL_URL is not set (README, SQL Server)"
        ),
        _ => {
            eprintln!("skipped: EAVPIVOT_MSSQL_URL is not set, so no SQL Server was used (README, SQL Server)");
            None
        }
    }
}

pub fn mssql() -> Option<Db> {
    Some(Db {
        what: "mssql",
        url: mssql_url()?,
        list_staging: |p| format!("SELECT name FROM sys.tables WHERE name LIKE '{p}%eavpivot%'"),
        _dir: None,
    })
}

/// The Citus coordinator at `EAVPIVOT_CITUS_URL` (CI: postgres://postgres@127.0.0.1:9700/postgres,
/// started by `.ci/citus.sh`), or `None` with the reason printed when the variable is unset —
/// a skip even under `EAVPIVOT_REQUIRE_SERVERS=1`; set but unreachable, [`Db::open`] fails
/// under it. Its dialect is PostgreSQL's: read tables with `db.dialect().name()`, not `what`.
pub fn citus() -> Option<Db> {
    match std::env::var("EAVPIVOT_CITUS_URL") {
        Ok(url) if !url.trim().is_empty() => Some(Db {
            what: "citus",
            url,
            list_staging: postgres().list_staging,
            _dir: None,
        }),
        _ => {
            eprintln!("skipped: EAVPIVOT_CITUS_URL is not set, so no Citus coordinator was used (.ci/citus.sh starts one)");
            None
        }
    }
}

/// Citus: spread the just-created `table` by `column` over 4 shards (a test's tables are
/// small; each shard is a table on a worker), so that the tables a run creates from it are
/// distributed and co-located with it.
pub async fn distribute(db: &mut dyn Backend, table: &str, column: &str) -> Result<(), String> {
    db.query(&format!(
        "SELECT create_distributed_table('{table}', '{column}', shard_count => 4)"
    ))
    .await
    .map(drop)
    .map_err(|e| format!("distributing {table} by {column}: {e}"))
}

/// Citus: the colocation group of the hash-distributed `table`, None when it is local.
pub async fn colocation(db: &mut dyn Backend, table: &str) -> Option<i64> {
    let rows = db
        .query(&format!(
            "SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = to_regclass('{table}') AND partmethod = 'h'"
        ))
        .await
        .unwrap_or_else(|e| panic!("pg_dist_partition for {table}: {e}"));
    rows.first().and_then(|r| r.first()).and_then(Value::as_i64)
}

/// Citus: `Err` unless `table` is distributed and co-located with the distributed `source`.
pub async fn co_located(db: &mut dyn Backend, table: &str, source: &str) -> Result<(), String> {
    let (got, want) = (colocation(db, table).await, colocation(db, source).await);
    match (got, want) {
        (Some(t), Some(s)) if t == s => Ok(()),
        _ => Err(format!(
            "{table} is not distributed and co-located with {source} (colocation {got:?}, the source's {want:?})"
        )),
    }
}

fn required() -> bool {
    std::env::var("EAVPIVOT_REQUIRE_SERVERS").as_deref() == Ok("1")
}

/// Whether the SQL Server under test is Babelfish for PostgreSQL (`SERVERPROPERTY('babelfish')`
/// is 1 there and NULL on SQL Server). The product asks it only inside its SQL Server catalog
/// query (`src/dialect/mssql.rs`, `listing_names`).
pub async fn is_babelfish(db: &mut dyn Backend) -> bool {
    db.query("SELECT CAST(SERVERPROPERTY('babelfish') AS INT)")
        .await
        .ok()
        .and_then(|rows| rows.first().and_then(|r| r.first()).and_then(Value::as_i64))
        == Some(1)
}

static GAPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Says, for one case, that it met a documented Babelfish difference from SQL Server instead
/// of running to the end, and counts it ([`known_gaps`]); SQL Server itself runs the case.
pub fn known_babelfish_gap(case: &str, reason: &str) {
    GAPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    eprintln!("known Babelfish gap: {case} ({reason})");
}

/// How many cases this test binary marked as known Babelfish gaps.
pub fn known_gaps() -> usize {
    GAPS.load(std::sync::atomic::Ordering::SeqCst)
}

impl Db {
    /// Connect, or explain why not: a failure under EAVPIVOT_REQUIRE_SERVERS=1, else a skip.
    pub async fn open(&self) -> Option<Box<dyn Backend>> {
        connect_or_skip(self.what, &self.url).await
    }
}

/// Runs each statement of a test's setup in order; a failure panics naming the statement.
pub async fn execute_all(db: &mut dyn Backend, statements: &[String]) {
    for sql in statements {
        db.execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

pub async fn drop_if_exists(db: &mut dyn Backend, table: &str) {
    let _ = db.execute(&format!("DROP TABLE IF EXISTS {table}")).await;
}

/// Row count and an order-independent checksum of a table's rows.
pub async fn fingerprint(db: &mut dyn Backend, table: &str) -> (usize, u64) {
    let rows = db
        .query(&format!("SELECT * FROM {table}"))
        .await
        .unwrap_or_else(|e| panic!("reading {table}: {e}"));
    let mut sum = 0u64;
    for row in &rows {
        let mut h = DefaultHasher::new();
        for v in row {
            v.as_text().hash(&mut h);
        }
        sum = sum.wrapping_add(h.finish());
    }
    (rows.len(), sum)
}

pub async fn names(db: &mut dyn Backend, sql: &str) -> Vec<String> {
    db.query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .filter_map(|r| r.first().and_then(Value::as_text))
        .collect()
}

pub async fn exists(db: &mut dyn Backend, table: &str) -> bool {
    db.query(&format!("SELECT COUNT(*) FROM {table}"))
        .await
        .is_ok()
}

pub fn eavpivot(args: &[&str], url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_eavpivot"));
    cmd.args(args)
        .args(["--connection", url, "--preview", "0"])
        .env_remove("EAVPIVOT_CONNECTION")
        .env_remove("EAVPIVOT_FAULT_PAUSE")
        .stdin(Stdio::null());
    cmd
}

pub fn run(args: &[&str], url: &str) -> Output {
    eavpivot(args, url).output().expect("run eavpivot")
}

/// `eavpivot run JOB --strategy STRATEGY` at `url`.
pub fn run_strategy(job: &std::path::Path, strategy: &str, url: &str) -> Output {
    run(
        &["run", &job.display().to_string(), "--strategy", strategy],
        url,
    )
}

/// A job file in `dir` pivoting `source` (`id`, `attr`, `val`) into `target`, `if_exists` as
/// given; named after both, so one test can hold several.
pub fn kv_job(
    dir: &std::path::Path,
    source: &str,
    target: &str,
    if_exists: &str,
) -> std::path::PathBuf {
    let path = dir.join(format!("{target}_{if_exists}.yaml"));
    let body = format!(
        "name: kv\nsource: {{table: {source}, alias: s}}\nentity: [s.id]\nattribute: s.attr\nvalue: s.val\ntarget: {{table: {target}, if_exists: {if_exists}}}\n"
    );
    std::fs::write(&path, body).expect("write job");
    path
}

/// `job` with `line` (a top-level YAML key: `pivot: {aggregate: error}`) appended.
pub fn append_to_job(job: &std::path::Path, line: &str) {
    let text = std::fs::read_to_string(job).expect("job");
    std::fs::write(job, format!("{text}{line}\n")).expect("job");
}

/// `text`'s bytes in upper-case hex, as MariaDB's `HEX()` prints them.
pub fn upper_hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02X}")).collect()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Start the binary paused at `point`; returns once it says it is there.
pub fn start_paused(args: &[&str], url: &str, point: &str) -> Child {
    start_resumable(args, url, point, None).0
}

/// [`start_paused`], able to go on once the file `resume` exists; the receiver gets the rest
/// of what it says on stderr.
pub fn start_resumable(
    args: &[&str],
    url: &str,
    point: &str,
    resume: Option<&std::path::Path>,
) -> (Child, mpsc::Receiver<String>) {
    let mut cmd = eavpivot(args, url);
    cmd.env("EAVPIVOT_FAULT_PAUSE", point);
    if let Some(file) = resume {
        cmd.env("EAVPIVOT_FAULT_RESUME", file);
    }
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn eavpivot");
    let err = child.stderr.take().expect("stderr piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut said = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.contains(&format!("paused at {point}")) => return (child, rx),
            Ok(line) => said.push(line),
            Err(_) => {
                let _ = child.kill();
                panic!("eavpivot never reached {point}; it said: {said:#?}");
            }
        }
    }
}

/// What a [`start_resumable`] child said after its pause, once it has exited: every line up
/// to the end of its stderr (the reader thread may still be forwarding lines when `wait`
/// returns), each wait bounded.
pub fn said_after(rx: &mpsc::Receiver<String>) -> Vec<String> {
    let mut said = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(10)) {
        said.push(line);
    }
    said
}

pub fn kill_9(mut child: Child) {
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}

/// A connection to `url`, or `None` (skipped, reason printed) when it is unreachable and
/// servers are not required.
pub fn server(what: &str, url: &str) -> Option<(tokio::runtime::Runtime, Box<dyn Backend>)> {
    let rt = runtime();
    let db = rt.block_on(connect_or_skip(what, url))?;
    Some((rt, db))
}

/// Connect, or explain why not: a failure under EAVPIVOT_REQUIRE_SERVERS=1, else a skip with
/// the reason printed. The one connect-or-skip of every server test.
pub async fn connect_or_skip(what: &str, url: &str) -> Option<Box<dyn Backend>> {
    let spec = ConnectionSpec::parse(Some(url)).expect("connection string");
    let options = ConnectOptions {
        connect_timeout: Duration::from_secs(5),
        // As the binary reads it: the SQL Server legs' password (README, SQL Server).
        password: std::env::var("EAVPIVOT_PASSWORD").ok(),
    };
    match backend::connect(&spec, &options).await {
        Ok(b) => Some(b),
        Err(e) if required() => {
            panic!(
                "{what} at {} is required (EAVPIVOT_REQUIRE_SERVERS=1) but unreachable: {e}",
                spec.display()
            )
        }
        Err(e) => {
            eprintln!("skipped: {what} at {} is unreachable: {e}", spec.display());
            None
        }
    }
}

/// entity → column → value, NULLs left out.
pub type Table = std::collections::BTreeMap<i64, Cells>;

/// column → value of one row, NULLs left out.
pub type Cells = std::collections::BTreeMap<String, String>;

/// Every row of `table` (keyed by its first, integer column) with its columns by name, as
/// the catalog of `what` lists them.
pub async fn read_table(db: &mut dyn Backend, what: &str, table: &str) -> Table {
    read_keyed(db, what, table, 1)
        .await
        .into_iter()
        .map(|(key, cells)| (key[0].as_i64().expect("integer id"), cells))
        .collect()
}

/// The rows of `sql`, every cell as text (NULL as empty).
pub async fn text_rows(db: &mut dyn Backend, sql: &str) -> Vec<Vec<String>> {
    db.query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .iter()
        .map(|r| r.iter().map(|v| v.as_text().unwrap_or_default()).collect())
        .collect()
}

/// Every row of `table`: its first `keys` columns, and the other columns by name (as the
/// catalog of `what` lists them) with their values as text, NULLs left out.
pub async fn read_keyed(
    db: &mut dyn Backend,
    what: &str,
    table: &str,
    keys: usize,
) -> Vec<(Vec<Value>, Cells)> {
    let d = eavpivot::dialect::by_name(what).expect("dialect");
    let table_ref = eavpivot::config::TableRef::parse(table).expect("table name");
    let columns = names(db, &d.table_columns(&table_ref)).await;
    let list: Vec<String> = columns.iter().map(|c| d.quote_ident(c)).collect();
    let rows = db
        .query(&format!("SELECT {} FROM {table}", list.join(", ")))
        .await
        .unwrap_or_else(|e| panic!("reading {table}: {e}"));
    rows.into_iter()
        .map(|mut row| {
            let cells = columns
                .iter()
                .zip(&row)
                .skip(keys)
                .filter_map(|(c, v)| v.as_text().map(|t| (c.clone(), t)))
                .collect();
            row.truncate(keys);
            (row, cells)
        })
        .collect()
}

/// A run of the library under `strategy`, without preview rows.
pub fn run_options(strategy: eavpivot::config::StrategyName) -> eavpivot::execute::RunOptions {
    eavpivot::execute::RunOptions {
        plan: eavpivot::plan::PlanOptions {
            strategy: Some(strategy),
            ..eavpivot::plan::PlanOptions::default()
        },
        preview_rows: 0,
        ..eavpivot::execute::RunOptions::default()
    }
}

/// Per entity (the integer `id` column), the text each of `columns` prints back as through
/// the dialect's `text_of` (NULL cells left out).
pub async fn printed(
    db: &mut dyn Backend,
    table: &str,
    columns: &[String],
) -> std::collections::BTreeMap<(i64, String), String> {
    let d = db.dialect();
    let select: Vec<String> = columns
        .iter()
        .map(|c| d.text_of(&d.quote_ident(c)))
        .collect();
    let rows = db
        .query(&format!("SELECT id, {} FROM {table}", select.join(", ")))
        .await
        .expect("read target");
    let mut out = std::collections::BTreeMap::new();
    for row in rows {
        let id = row[0].as_i64().expect("id");
        for (c, v) in columns.iter().zip(&row[1..]) {
            if let Some(text) = v.as_text() {
                out.insert((id, c.clone()), text);
            }
        }
    }
    out
}

/// A database of the test's own: PostgreSQL holding `setup` (a collation, an extension), or
/// MariaDB with its own default character set, so that nothing it declares reaches the shared
/// database; dropped when the guard is.
pub struct ScratchDatabase {
    admin: Db,
    name: String,
}

impl ScratchDatabase {
    /// PostgreSQL. None where it is unreachable, or cannot make the database or run `setup`
    /// (no CREATEDB right, no ICU): skipped with the reason, a failure under
    /// EAVPIVOT_REQUIRE_SERVERS=1.
    pub async fn create(tag: &str, setup: &[&str]) -> Option<(ScratchDatabase, Db)> {
        Self::make(postgres(), tag, "", setup).await
    }

    /// MariaDB, `options` its defaults (`CHARACTER SET latin1`); as [`Self::create`].
    pub async fn create_mariadb(tag: &str, options: &str) -> Option<(ScratchDatabase, Db)> {
        Self::make(mariadb(), tag, options, &[]).await
    }

    async fn make(
        admin: Db,
        tag: &str,
        options: &str,
        setup: &[&str],
    ) -> Option<(ScratchDatabase, Db)> {
        let mut conn = admin.open().await?;
        // One per call: tests of one binary run side by side, and a second create of the
        // same name would drop (WITH FORCE) the first one's database under it.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("eavpivot_scratch_{tag}_{}_{n}", std::process::id());
        let what = admin.what;
        let scratch = ScratchDatabase {
            admin,
            name: name.clone(),
        };
        let made: Result<Db, String> = async {
            let _ = conn.execute(&scratch.drop_sql()).await;
            conn.execute(&format!("CREATE DATABASE {name} {options}"))
                .await
                .map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
            let mut url = url::Url::parse(&scratch.admin.url)
                .map_err(|e| format!("{}: {e}", scratch.admin.url))?;
            url.set_path(&format!("/{name}"));
            let db = Db {
                what,
                url: url.to_string(),
                list_staging: scratch.admin.list_staging,
                _dir: None,
            };
            let mut own = db.open().await.ok_or("the scratch database did not open")?;
            for sql in setup {
                own.execute(sql).await.map_err(|e| format!("{sql}: {e}"))?;
            }
            Ok(db)
        }
        .await;
        match made {
            Ok(db) => Some((scratch, db)),
            Err(why) if std::env::var("EAVPIVOT_REQUIRE_SERVERS").as_deref() == Ok("1") => {
                panic!("a scratch {what} database: {why}")
            }
            Err(why) => {
                eprintln!("skipping: a scratch {what} database: {why}");
                None
            }
        }
    }

    /// PostgreSQL's needs FORCE while the test's own connections are open.
    fn drop_sql(&self) -> String {
        let name = &self.name;
        match self.admin.what {
            "postgres" => format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            _ => format!("DROP DATABASE IF EXISTS {name}"),
        }
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        let (what, url, sql) = (self.admin.what, self.admin.url.clone(), self.drop_sql());
        // Its own runtime on its own thread: a drop cannot await the test's.
        let _ = std::thread::spawn(move || {
            runtime().block_on(async {
                if let Some(mut conn) = connect_or_skip(what, &url).await {
                    let _ = conn.execute(&sql).await;
                }
            })
        })
        .join();
    }
}

/// For [`ScratchDatabase`]: a collation under which `k` and `K` are one (ICU, level 2).
pub const CASE_INSENSITIVE_COLLATION: &str =
    "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)";
/// For [`ScratchDatabase`]: the case-insensitive text type.
pub const CITEXT: &str = "CREATE EXTENSION IF NOT EXISTS citext";
