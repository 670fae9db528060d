//! Running a case for real: the source tables written with this file's own SQL, the job
//! file, the binary (`--json`), and the target read back through the report's column map
//! with this file's own catalog queries. Nothing here comes from eavpivot's dialects.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use eavpivot::backend::Backend;
use eavpivot::value::Value;

use super::gen::Case;
use super::model::{Cell, Row, Step, K};
use super::numbers::Column;
use super::servers;

/// A database leg, named by `what`: SQLite, PostgreSQL, MariaDB (indices 0, 1, 2 in
/// `Case::cross`), PostgreSQL again with every source text column under a case-insensitive,
/// nondeterministic collation (`postgres_ci`) and of type citext (`postgres_citext`), and
/// MariaDB in a schema whose default character set is latin1 (`mariadb_latin1`), each a
/// scratch database of the run's own, then SQL
/// Server when `EAVPIVOT_MSSQL_URL` names one (password in
/// `EAVPIVOT_PASSWORD`; Babelfish works) and Citus when `EAVPIVOT_CITUS_URL` names a
/// coordinator (PostgreSQL's SQL, the source distributed by its first key column). Every
/// per-leg choice goes by `what`, never by index.
pub struct Db {
    pub what: &'static str,
    pub url: String,
    pub conn: Box<dyn Backend>,
    _keep: Option<servers::Db>,
    _scratch: Option<servers::ScratchDatabase>,
}

/// Every backend, connected; None when a server is unreachable (a failure under
/// EAVPIVOT_REQUIRE_SERVERS=1, see servers.rs).
pub fn open_all(rt: &tokio::runtime::Runtime) -> Option<Vec<Db>> {
    let mut dbs = Vec::new();
    for s in [servers::sqlite(), servers::postgres(), servers::mariadb()] {
        let conn = rt.block_on(s.open())?;
        dbs.push(Db {
            what: s.what,
            url: s.url.clone(),
            conn,
            _keep: Some(s),
            _scratch: None,
        });
    }
    // PostgreSQL whose source text is one under case: a scratch database each; where none
    // can be made, the leg is left out (saying why).
    let scratch_legs = [
        ("postgres_ci", servers::CASE_INSENSITIVE_COLLATION, "diffci"),
        ("postgres_citext", servers::CITEXT, "diffcitext"),
    ];
    for (what, setup, tag) in scratch_legs {
        if let Some((scratch, db)) = rt.block_on(servers::ScratchDatabase::create(tag, &[setup])) {
            let conn = rt.block_on(db.open())?;
            dbs.push(Db {
                what,
                url: db.url.clone(),
                conn,
                _keep: None,
                _scratch: Some(scratch),
            });
        }
    }
    // MariaDB in a schema whose default character set is latin1 (a legacy database): the
    // source's text is utf8mb4, the tables eavpivot creates must hold every value of it.
    let latin1 = servers::ScratchDatabase::create_mariadb("difflatin1", "CHARACTER SET latin1");
    if let Some((scratch, db)) = rt.block_on(latin1) {
        let conn = rt.block_on(db.open())?;
        dbs.push(Db {
            what: "mariadb_latin1",
            url: db.url.clone(),
            conn,
            _keep: None,
            _scratch: Some(scratch),
        });
    }
    if let Some(url) = std::env::var("EAVPIVOT_MSSQL_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
    {
        let spec =
            eavpivot::backend::ConnectionSpec::parse(Some(&url)).expect("EAVPIVOT_MSSQL_URL");
        let options = eavpivot::backend::ConnectOptions {
            password: std::env::var("EAVPIVOT_PASSWORD").ok(),
            ..eavpivot::backend::ConnectOptions::default()
        };
        let conn = rt
            .block_on(eavpivot::backend::connect(&spec, &options))
            .unwrap_or_else(|e| panic!("EAVPIVOT_MSSQL_URL is set but unreachable: {e}"));
        // The binary gets the password in the URL: EAVPIVOT_PASSWORD would also reach the
        // other side of a pair (MariaDB's root has none).
        let url = match (url::Url::parse(&url), options.password.as_deref()) {
            (Ok(mut u), Some(p)) if u.password().is_none() => {
                u.set_password(Some(p))
                    .expect("a password fits a mssql:// URL");
                u.to_string()
            }
            _ => url,
        };
        dbs.push(Db {
            what: "mssql",
            url,
            conn,
            _keep: None,
            _scratch: None,
        });
    }
    if let Some(url) = std::env::var("EAVPIVOT_CITUS_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
    {
        // Unreachable: a failure under EAVPIVOT_REQUIRE_SERVERS=1, else the leg is skipped.
        if let Some(mut conn) = rt.block_on(servers::connect_or_skip("citus", &url)) {
            let sql = "SELECT extname::text FROM pg_extension WHERE extname = 'citus'";
            let rows = rt
                .block_on(conn.query(sql))
                .unwrap_or_else(|e| panic!("EAVPIVOT_CITUS_URL: {sql}: {e}"));
            assert!(
                !rows.is_empty(),
                "EAVPIVOT_CITUS_URL names a server without the citus extension"
            );
            dbs.push(Db {
                what: "citus",
                url,
                conn,
                _keep: None,
                _scratch: None,
            });
        }
    }
    Some(dbs)
}

/// The SQL a leg speaks: Citus, `postgres_ci` and `postgres_citext` are PostgreSQL's.
pub fn sql_of(what: &str) -> &str {
    match what {
        "citus" | "postgres_ci" | "postgres_citext" => "postgres",
        "mariadb_latin1" => "mariadb",
        w => w,
    }
}

/// A URL for `what` in a printed reproduction (no password).
pub fn example_url(what: &str) -> &'static str {
    match what {
        "sqlite" => "sqlite:d.db",
        "postgres" => "postgres://postgres@127.0.0.1:5432/test",
        "mariadb" => "mariadb://root@127.0.0.1:3306/test",
        "citus" => "postgres://postgres@127.0.0.1:9700/postgres",
        // CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)
        "postgres_ci" => "postgres://postgres@127.0.0.1:5432/ci",
        // CREATE EXTENSION citext
        "postgres_citext" => "postgres://postgres@127.0.0.1:5432/citext",
        // CREATE DATABASE latin1 CHARACTER SET latin1
        "mariadb_latin1" => "mariadb://root@127.0.0.1:3306/latin1",
        _ => "mssql://bbf_admin@127.0.0.1:1433/master?trust_cert=true",
    }
}

/// Whether the SQL Server among `dbs` is Babelfish (its known gaps are said, not failed).
pub fn is_babelfish(rt: &tokio::runtime::Runtime, dbs: &mut [Db]) -> bool {
    dbs.iter_mut()
        .find(|d| d.what == "mssql")
        .is_some_and(|db| rt.block_on(servers::is_babelfish(db.conn.as_mut())))
}

/// A SQL string literal, written for `what` (MariaDB reads backslashes as escapes).
pub fn literal(what: &str, s: &str) -> String {
    let s = s.replace('\'', "''");
    match what {
        "mariadb" => format!("'{}'", s.replace('\\', "\\\\")),
        "mssql" => format!("N'{s}'"),
        _ => format!("'{s}'"),
    }
}

pub fn quote(what: &str, ident: &str) -> String {
    match what {
        "mariadb" => format!("`{}`", ident.replace('`', "``")),
        "mssql" => format!("[{}]", ident.replace(']', "]]")),
        _ => format!("\"{}\"", ident.replace('"', "\"\"")),
    }
}

/// The names one case uses on one database; every one starts with `diff_`.
#[derive(Clone)]
pub struct Names {
    pub source: String,
    pub attrs: String,
    pub target: String,
}

impl Names {
    pub fn new(tag: &str, idcase: bool) -> Names {
        let (s, n, w) = if idcase {
            ("Src", "Names", "Wide")
        } else {
            ("src", "names", "wide")
        };
        Names {
            source: format!("diff_{tag}_{s}"),
            attrs: format!("diff_{tag}_{n}"),
            target: format!("diff_{tag}_{w}"),
        }
    }
}

/// Attribute name -> join id, in a stable order.
pub fn attr_ids(case: &Case) -> BTreeMap<Option<String>, i64> {
    let all: BTreeSet<Option<String>> = case
        .steps
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| r.attr.clone()))
        .collect();
    all.into_iter().zip(1..).collect()
}

/// The statements that create and fill the source of `step` on the leg `what`; on Citus the
/// source is distributed by its first key column (the names table is a reference table), so
/// the product's `target.distribute: auto` distributes every table it creates.
pub fn source_sql(case: &Case, step: &Step, n: &Names, leg: &str) -> Vec<String> {
    let what = sql_of(leg);
    let n_ = if what == "mssql" { "N" } else { "" };
    // Every text column's type, by its length: `postgres_citext`'s are all citext.
    let text = move |len: u32| match leg {
        "postgres_ci" => format!("VARCHAR({len}) COLLATE ci"),
        "postgres_citext" => "citext".to_string(),
        "mariadb_latin1" => format!("VARCHAR({len}) CHARACTER SET utf8mb4"),
        _ => format!("{n_}VARCHAR({len})"),
    };
    let mut sql = create_source(case, step, n, (what, &text));
    if leg == "citus" {
        sql.insert(
            1,
            format!(
                "SELECT create_distributed_table('{}', '{}')",
                n.source,
                case.keys[0].name.to_lowercase()
            ),
        );
        if case.join {
            sql.insert(3, format!("SELECT create_reference_table('{}')", n.attrs));
        }
    }
    sql
}

/// `text`: the type of a text column of that many characters.
fn create_source(
    case: &Case,
    step: &Step,
    n: &Names,
    (what, text): (&str, &dyn Fn(u32) -> String),
) -> Vec<String> {
    let keys: Vec<String> = case
        .keys
        .iter()
        .map(|k| match k.text {
            true => format!("{} {}", k.name, text(40)),
            false => format!("{} INT", k.name),
        })
        .collect();
    let attr_col = if case.join {
        "aid INT".to_string()
    } else {
        format!("attr {}", text(200))
    };
    let val_col = case
        .values
        .sql_type(what)
        .map_or_else(|| text(200), str::to_string);
    let mut sql = vec![format!(
        "CREATE TABLE {} ({}, {attr_col}, val {val_col}, grp INT, modified INT)",
        n.source,
        keys.join(", "),
    )];
    let ids = attr_ids(case);
    let lit = |v: &Option<String>| {
        v.as_deref()
            .map_or("NULL".to_string(), |s| literal(what, s))
    };
    if case.join {
        sql.push(format!(
            "CREATE TABLE {} (aid INT, name {})",
            n.attrs,
            text(200)
        ));
        let values: Vec<String> = ids
            .iter()
            .map(|(a, id)| format!("({id}, {})", lit(a)))
            .collect();
        sql.push(format!(
            "INSERT INTO {} VALUES {}",
            n.attrs,
            values.join(", ")
        ));
    }
    let values: Vec<String> = step
        .rows
        .iter()
        .map(|r: &Row| {
            let key: Vec<String> = r
                .key
                .iter()
                .map(|k| match k {
                    K::I(i) => i.to_string(),
                    K::T(t) => literal(what, t),
                })
                .collect();
            let attr = if case.join {
                ids[&r.attr].to_string()
            } else {
                lit(&r.attr)
            };
            // A numeric value column gets its numerals as numbers, not strings to convert.
            let val = match (&r.val, case.values) {
                (Some(v), c) if c != Column::Text => v.clone(),
                (v, _) => lit(v),
            };
            format!(
                "({}, {attr}, {val}, {}, {})",
                key.join(", "),
                r.grp,
                r.modified
            )
        })
        .collect();
    if !values.is_empty() {
        sql.push(format!(
            "INSERT INTO {} VALUES {}",
            n.source,
            values.join(", ")
        ));
    }
    sql
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// A delta on the entity key alone: `s.<first key> IN (…)`, or a constant false for none.
fn key_delta(case: &Case, firsts: &std::collections::BTreeSet<K>) -> String {
    let literals: Vec<String> = firsts
        .iter()
        .map(|k| match k {
            K::I(i) => i.to_string(),
            K::T(t) => format!("'{}'", t.replace('\'', "''")),
        })
        .collect();
    match (case.keys.first(), literals.is_empty()) {
        (Some(key), false) => format!("s.{} IN ({})", key.name, literals.join(", ")),
        _ => "1 = 0".into(),
    }
}

/// The job file for `step`.
pub fn job_yaml(case: &Case, step: &Step, n: &Names) -> String {
    let j = &case.job;
    let mut source = format!("table: {}, alias: s", n.source);
    if case.join {
        source += &format!(
            ", joins: [{{table: {}, alias: n, on: \"s.aid = n.aid\"}}]",
            n.attrs
        );
    }
    if step.where_g.is_some() {
        source += ", where: \"s.grp >= ${g}\"";
    }
    if step.changed.is_some() {
        source += &match step.changed_keys() {
            Some(firsts) => format!(", changed: {}", yaml_str(&key_delta(case, &firsts))),
            None => ", changed: \"s.modified >= ${since}\"".into(),
        };
    }
    let entity: Vec<String> = case.keys.iter().map(|k| format!("s.{}", k.name)).collect();
    let types: Vec<String> = j
        .types
        .iter()
        .map(|(a, t)| format!("{}: {}", yaml_str(a), yaml_str(t)))
        .collect();
    let aggregate = format!("{:?}", j.aggregate).to_lowercase();
    let on_new = format!("{:?}", j.on_new).to_lowercase();
    let mut target = format!(
        "table: {}, if_exists: {}",
        n.target,
        if step.merge { "merge" } else { "replace" }
    );
    if step.merge {
        target += if j.on_missing_delete {
            ", on_missing: delete"
        } else {
            ", on_missing: keep"
        };
    }
    if let Some(split) = j.split {
        target += &format!(", split: {split}");
    }
    format!(
        "name: diff\nsource: {{{source}}}\nentity: [{}]\nattribute: {}\nvalue: s.val\npivot: {{aggregate: {aggregate}, column_type: {}, types: {{{}}}, on_new_attributes: {on_new}}}\ntarget: {{{target}}}\nstrategy: {}\n",
        entity.join(", "),
        if case.join { "n.name" } else { "s.attr" },
        if j.infer { "infer" } else { "text" },
        types.join(", "),
        if j.pushdown { "pushdown" } else { "stream" },
    )
}

/// The command line of `step` (for running and for the printed reproduction).
pub fn args(step: &Step, job: &str, source_url: &str, target_url: Option<&str>) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        job,
        "--json",
        "--preview",
        "0",
        "--connection",
        source_url,
    ]
    .map(String::from)
    .to_vec();
    if let Some(t) = target_url {
        a.extend(["--target-connection".into(), t.into()]);
    }
    if let Some(g) = step.where_g {
        a.extend(["--var".into(), format!("g={g}")]);
    }
    if let Some(since) = step.changed {
        a.extend(["--var".into(), format!("since={since}")]);
    }
    a
}

pub struct Ran {
    pub code: Option<i32>,
    pub report: serde_json::Value,
    pub stderr: String,
}

/// The binary, killed after two minutes (a hang is a finding, not a stuck test run).
pub fn run(args: &[String]) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_eavpivot"))
        .args(args)
        .env_remove("EAVPIVOT_CONNECTION")
        .env_remove("EAVPIVOT_TARGET_CONNECTION")
        .env_remove("EAVPIVOT_PASSWORD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn eavpivot");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut stdout = String::new();
    let _ = out.read_to_string(&mut stdout);
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = reader.join().unwrap_or_default();
    Ran {
        code: status.and_then(|s| s.code()),
        report: serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null),
        stderr,
    }
}

/// attribute -> (table, column), from a report's `columns`.
pub fn column_map(report: &serde_json::Value) -> BTreeMap<String, (String, String)> {
    let mut map = BTreeMap::new();
    for c in report["columns"].as_array().into_iter().flatten() {
        if let (Some(a), Some(col), Some(t)) = (
            c["attribute"].as_str(),
            c["column"].as_str(),
            c["table"].as_str(),
        ) {
            map.insert(a.to_string(), (t.to_string(), col.to_string()));
        }
    }
    map
}

/// The target as read back: key -> attribute -> cell, and every attribute column found.
#[derive(Debug, Default)]
pub struct Actual {
    pub columns: BTreeSet<String>,
    pub rows: BTreeMap<Vec<K>, BTreeMap<String, Cell>>,
    /// Attributes whose column has been text in every run since the target was created: their
    /// cells are the source's texts as written, compared exactly in a typed job too.
    pub as_written: BTreeSet<String>,
}

async fn catalog_columns(
    db: &mut dyn Backend,
    what: &str,
    table: &str,
) -> Result<Vec<String>, String> {
    let what = sql_of(what);
    let t = literal(what, table);
    let sql = match what {
        "sqlite" => format!("SELECT name FROM pragma_table_info({t})"),
        "postgres" => format!(
            "SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = {} ORDER BY ordinal_position",
            literal(what, &table.to_lowercase())
        ),
        // NVARCHAR: Babelfish's sysname is VARCHAR and would lose characters outside its
        // code page (SQL Server's is NVARCHAR already).
        "mssql" => format!(
            "SELECT CAST(name AS NVARCHAR(128)) FROM sys.columns WHERE object_id = OBJECT_ID({t}) ORDER BY column_id"
        ),
        _ => format!(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND LOWER(table_name) = LOWER({t}) ORDER BY ordinal_position"
        ),
    };
    let rows = db.query(&sql).await.map_err(|e| format!("{sql}: {e}"))?;
    Ok(rows
        .into_iter()
        .filter_map(|r| r.first().and_then(Value::as_text))
        .collect())
}

fn cell(v: &Value) -> Option<Cell> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(Cell::Int(*i)),
        Value::Float(f) => Some(Cell::Real(*f)),
        Value::Text(t) => Some(Cell::Text(t.clone())),
        Value::Bytes(b) | Value::TextBytes(b) => Some(match std::str::from_utf8(b) {
            Ok(t) => Cell::Text(t.to_string()),
            Err(_) => Cell::Bytes(b.clone()),
        }),
    }
}

fn key_of(v: &Value, text: bool) -> Option<K> {
    match text {
        true => v
            .text_bytes()
            .map(|b| K::T(String::from_utf8_lossy(b).into_owned())),
        false => v.as_i64().map(K::I),
    }
}

/// Every table of `tables`, keyed by the job's (unquoted) key names, columns by `map`.
pub async fn read_target(
    db: &mut dyn Backend,
    what: &str,
    case: &Case,
    tables: &[String],
    map: &BTreeMap<String, (String, String)>,
) -> Result<Actual, String> {
    let what = sql_of(what);
    let mut actual = Actual::default();
    let keys: BTreeSet<String> = case.keys.iter().map(|k| k.name.to_lowercase()).collect();
    // Only Babelfish lists names shortened: on SQL Server a listed name must be the report's.
    let babelfish = what == "mssql" && servers::is_babelfish(db).await;
    for table in tables {
        let by_column: BTreeMap<&str, &str> = map
            .iter()
            .filter(|(_, (t, _))| t.eq_ignore_ascii_case(table))
            .map(|(a, (_, c))| (c.as_str(), a.as_str()))
            .collect();
        let present = catalog_columns(db, what, table).await?;
        let mut attrs = Vec::new();
        for c in &present {
            if keys.contains(&c.to_lowercase()) {
                continue;
            }
            // SQL Server names are case-insensitive (and Babelfish's catalog lower-cases
            // them), so there a column is matched to the report's map without case.
            let mapped = match what {
                "mssql" => by_column
                    .iter()
                    .find(|(m, _)| m.to_lowercase() == c.to_lowercase())
                    .map(|(_, a)| *a),
                _ => by_column.get(c.as_str()).copied(),
            };
            // Babelfish lists a name over 63 bytes shortened (`long…` + an MD5): the
            // server's own resolution of a mapped name tells which column it is.
            let mapped = match (mapped, what) {
                (None, "mssql") if babelfish => resolved_to(db, table, c, &by_column).await?,
                (found, _) => found.map(|a| (c.clone(), a.to_string())),
            };
            match mapped {
                Some(found) => attrs.push(found),
                None => {
                    return Err(format!(
                        "{table}: column {c:?} is in no report's column map"
                    ))
                }
            }
        }
        let mut list: Vec<String> = case.keys.iter().map(|k| k.name.clone()).collect();
        list.extend(attrs.iter().map(|(c, _)| match what {
            "postgres" => format!("CAST({} AS TEXT)", quote(what, c)),
            "mssql" => format!("CAST({} AS NVARCHAR(MAX))", quote(what, c)),
            _ => quote(what, c),
        }));
        let sql = format!("SELECT {} FROM {table}", list.join(", "));
        let rows = db.query(&sql).await.map_err(|e| format!("{sql}: {e}"))?;
        for row in rows {
            let key: Option<Vec<K>> = case
                .keys
                .iter()
                .zip(&row)
                .map(|(k, v)| key_of(v, k.text))
                .collect();
            let key =
                key.ok_or_else(|| format!("{table}: a key that is NULL or not readable: {row:?}"))?;
            let cells = actual.rows.entry(key).or_default();
            for ((_, attr), v) in attrs.iter().zip(&row[case.keys.len()..]) {
                if let Some(c) = cell(v) {
                    cells.insert(attr.clone(), c);
                }
            }
        }
        actual.columns.extend(attrs.into_iter().map(|(_, a)| a));
    }
    Ok(actual)
}

/// The mapped column (its name as the report gives it, and its attribute) that SQL Server
/// resolves to the listed column `listed` of `table`, if any.
async fn resolved_to(
    db: &mut dyn Backend,
    table: &str,
    listed: &str,
    by_column: &BTreeMap<&str, &str>,
) -> Result<Option<(String, String)>, String> {
    let t = literal("mssql", table);
    for (column, attribute) in by_column {
        let sql = format!(
            "SELECT CAST(COL_NAME(OBJECT_ID({t}), COLUMNPROPERTY(OBJECT_ID({t}), {}, 'ColumnId')) AS NVARCHAR(128))",
            literal("mssql", column)
        );
        let rows = db.query(&sql).await.map_err(|e| format!("{sql}: {e}"))?;
        let name = rows
            .first()
            .and_then(|r| r.first())
            .and_then(Value::as_text);
        if name.as_deref() == Some(listed) {
            return Ok(Some((column.to_string(), attribute.to_string())));
        }
    }
    Ok(None)
}

/// Row count and an order-independent checksum of a table's rows; None when it does not
/// exist, the error text when it cannot be read.
pub async fn checksum(db: &mut dyn Backend, table: &str) -> Option<Result<(usize, u64), String>> {
    use std::hash::{Hash, Hasher};
    if !servers::exists(db, table).await {
        return None;
    }
    let rows = match db.query(&format!("SELECT * FROM {table}")).await {
        Ok(rows) => rows,
        Err(e) => return Some(Err(format!("reading {table}: {e}"))),
    };
    let mut sum = 0u64;
    for row in &rows {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!("{row:?}").hash(&mut h);
        sum = sum.wrapping_add(h.finish());
    }
    Some(Ok((rows.len(), sum)))
}
