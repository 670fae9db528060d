//! The SQL Server job, the scripted servers it meets and the one run every TDS test makes:
//! the real eavpivot binary, over the real TDS protocol (tiberius), against the scripted TDS
//! peer in tests/common. No SQL Server is involved.

use std::path::PathBuf;
use std::process::Output;

use assert_cmd::Command;

use crate::tds_peer::{
    contains, starts_with, BulkColumn, ColType, Column, Received, Response, Script, TdsPeer, Value,
};

pub const PASSWORD: &str = "s3cret-Pw";

pub const JOB: &str = "name: tds_job
source:
  table: dbo.EAV
entity: [item_id]
attribute: attr
value: val
pivot:
  aggregate: max
target:
  table: dbo.WIDE
  if_exists: fail
strategy: pushdown
";

pub fn job_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tds_job.yaml");
    std::fs::write(&path, JOB).expect("write job");
    (dir, path)
}

pub fn url(port: u16, password: &str) -> String {
    format!("mssql://sa:{password}@127.0.0.1:{port}/eav?encrypt=not_supported")
}

pub fn int(n: i64) -> Option<Value> {
    Some(n.into())
}

pub fn text(s: &str) -> Option<Value> {
    Some(s.into())
}

/// `first`'s rules ahead of `then`'s: for a statement both answer, `first` wins.
pub fn ahead(first: Script, then: Script) -> Script {
    let mut rules = first.rules;
    rules.extend(then.rules);
    Script { rules }
}

/// One row of unnamed INT columns: a count, or the target check's counts.
pub fn ints(row: Vec<Option<Value>>) -> Response {
    Response::rows(vec![Column::new("", ColType::Int); row.len()], vec![row])
}

/// Discovery's answer (`… AS n_rows`): per attribute key (`Color|`), its rows and values.
pub fn discovered(rows: Vec<Vec<Option<Value>>>) -> Response {
    Response::rows(
        vec![
            Column::new("a", ColType::NVarCharMax),
            Column::new("n_rows", ColType::Int),
            Column::new("n_values", ColType::Int),
        ],
        rows,
    )
}

/// `script`'s rules, then the answers a pushdown into a new target meets before its load:
/// the key is an INT `e0`, the target does not exist yet, and the conflict check (`pairs`)
/// finds `pairs` (attribute key, pairs, conflicting).
pub fn before_the_load(script: Script, pairs: Vec<Vec<Option<Value>>>) -> Script {
    script
        .on(
            contains("sp_describe_first_result_set"),
            Response::describe_int_key("e0"),
        )
        .on(contains("OBJECT_ID("), ints(vec![int(0)]))
        .on(
            starts_with("SELECT p.a, COUNT(*) AS pairs"),
            Response::rows(
                vec![
                    Column::new("a", ColType::NVarCharMax),
                    Column::new("pairs", ColType::Int),
                    Column::new("conflicting", ColType::Int),
                ],
                pairs,
            ),
        )
}

/// A server with the EAV rows: Color (2 items), Size (1 item), 3 items in all.
pub fn eav_server() -> Script {
    let discovery = Script::new().on(
        contains("AS n_rows"),
        discovered(vec![
            vec![text("Color|"), int(2), int(2)],
            vec![text("Size|"), int(1), int(1)],
        ]),
    );
    let pairs = vec![
        vec![text("Color|"), int(2), int(0)],
        vec![text("Size|"), int(1), int(0)],
    ];
    before_the_load(discovery, pairs)
        .on(starts_with("INSERT INTO"), Response::RowCount(3))
        .on(
            starts_with("SELECT COUNT(*) FROM (SELECT DISTINCT"),
            ints(vec![int(3)]),
        )
        .on(
            starts_with("SELECT COUNT(*), COUNT([Color])"),
            ints(vec![int(3), int(2), int(1)]),
        )
}

pub fn eavpivot(args: &[&str], connection: &str) -> Output {
    Command::cargo_bin("eavpivot")
        .expect("binary built")
        .args(args)
        .env("EAVPIVOT_CONNECTION", connection)
        .env_remove("EAVPIVOT_PASSWORD")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("eavpivot runs")
}

pub fn show(label: &str, peer: &TdsPeer, out: &Output) {
    eprintln!("== {label}: statements received by the TDS peer, in order ==");
    for (i, sql) in peer.statements().iter().enumerate() {
        eprintln!("[{}] {}", i + 1, sql.replace('\n', "\n    "));
    }
    eprintln!("== stderr ==\n{}", String::from_utf8_lossy(&out.stderr));
}

pub fn assert_no_password(out: &Output, password: &str) {
    for stream in [&out.stdout, &out.stderr] {
        assert!(
            !String::from_utf8_lossy(stream).contains(password),
            "the password was printed"
        );
    }
}

/// The one run the tests here make: a peer answering `script`, then `eavpivot run JOB
/// <flags…>` against it (password in the URL), what the peer received printed under `label`.
pub fn run_on_peer(label: &str, script: Script, flags: &[&str]) -> (TdsPeer, Output) {
    let peer = TdsPeer::start(script);
    let (_dir, job) = job_file();
    let mut args = vec!["run", job.to_str().expect("utf-8 path")];
    args.extend_from_slice(flags);
    let out = eavpivot(&args, &url(peer.port(), PASSWORD));
    show(label, &peer, &out);
    (peer, out)
}

/// The statements a run of JOB sends, as its --json report lists them (exactly what is sent).
pub fn expected_statements(json: &serde_json::Value) -> Vec<String> {
    json["statements"]
        .as_array()
        .expect("statements in --json")
        .iter()
        .map(|s| s.as_str().expect("text").to_string())
        .collect()
}

/// The stream job's key–value rows as the ordered read returns them: (item, attribute, value).
pub type Kv<'a> = (i64, &'a str, Option<&'a str>);

/// A server for JOB run with `--strategy stream`: discovery finds `attrs`, the ordered read
/// (on its own connection) returns `rows`, and the metadata query a bulk load starts with
/// (`SELECT TOP 0 <columns> FROM dbo.WIDE`) is answered with `wide`, the target's columns as
/// SQL Server would describe them.
pub fn stream_server(attrs: &[&str], rows: &[Kv], wide: Vec<Column>) -> Script {
    let discovery = attrs
        .iter()
        .map(|a| {
            let n = |all: bool| {
                let of_a = rows.iter().filter(|r| r.1 == *a);
                of_a.filter(|r| all || r.2.is_some()).count() as i64
            };
            vec![text(&format!("{a}|")), int(n(true)), int(n(false))]
        })
        .collect();
    // The target check: rows, then non-NULL cells per attribute column.
    let mut entities: Vec<i64> = rows.iter().map(|r| r.0).collect();
    entities.dedup();
    let mut counts = vec![int(entities.len() as i64)];
    counts.extend(attrs.iter().map(|a| {
        let filled = rows.iter().filter(|r| r.1 == *a && r.2.is_some()).count();
        int(filled as i64)
    }));
    let verified = ints(counts);
    let read = rows
        .iter()
        .map(|(e, a, v)| vec![int(*e), text(&format!("{a}|")), v.and_then(text)])
        .collect();
    let stream = Script::new()
        .on(contains("AS n_rows"), discovered(discovery))
        .on(
            contains("ORDER BY s.e0"),
            Response::rows(
                vec![
                    Column::new("e0", ColType::Int),
                    Column::new("a", ColType::NVarCharMax),
                    Column::new("v", ColType::NVarChar),
                ],
                read,
            ),
        )
        .on(
            starts_with("SELECT TOP 0"),
            Response::rows(wide, Vec::new()),
        )
        .on(starts_with("SELECT COUNT(*), COUNT("), verified);
    ahead(stream, eav_server())
}

/// A peer with the stream job's `attrs` and `rows`, the target made by eavpivot.
pub fn created(attrs: &[&str], rows: &[Kv]) -> Script {
    stream_server(attrs, rows, created_columns(attrs))
}

/// The wide table as `CREATE TABLE` makes it: `[item_id] INT NOT NULL`, then one
/// `NVARCHAR(MAX)` column per attribute.
pub fn created_columns(attrs: &[&str]) -> Vec<Column> {
    let mut columns = vec![Column::new("item_id", ColType::IntNotNull)];
    columns.extend(attrs.iter().map(|a| Column::new(a, ColType::NVarCharMax)));
    columns
}

/// Color on items 1 and 2, Size on item 1, a NULL Color on item 3.
pub const COLOR_SIZE_ROWS: [Kv; 4] = [
    (1, "Color", Some("Red")),
    (1, "Size", Some("M")),
    (2, "Color", Some("Blue")),
    (3, "Color", None),
];

/// COLOR_SIZE_ROWS as the wide rows a load must write.
pub fn color_size_wide() -> Rows {
    vec![
        vec![int(1), text("Red"), text("M")],
        vec![int(2), text("Blue"), None],
        vec![int(3), None, None],
    ]
}

/// `run JOB --strategy stream --json` against a peer answering `script`: it must succeed
/// without printing the password; returns the report.
pub fn run_stream(script: Script, label: &str) -> (TdsPeer, serde_json::Value) {
    let (peer, out) = run_on_peer(label, script, &["--strategy", "stream", "--json"]);
    assert!(out.status.success(), "exit {:?}", out.status.code());
    assert_no_password(&out, PASSWORD);
    let json = serde_json::from_slice(&out.stdout).expect("--json output");
    (peer, json)
}

pub fn label(r: &Received) -> String {
    match r {
        Received::Batch(s) if s.ends_with("BEGIN TRANSACTION") => "BEGIN".into(),
        Received::Batch(s) if s.starts_with("CREATE TABLE dbo.WIDE") => "CREATE".into(),
        Received::Batch(s) if s.starts_with("SELECT TOP 0") => "SELECT TOP 0".into(),
        Received::Batch(s) if s.starts_with("INSERT BULK dbo.WIDE") => "INSERT BULK".into(),
        Received::Batch(s) if s.starts_with("SELECT COUNT(*), COUNT(") => "verify".into(),
        Received::Batch(s) if s == "COMMIT TRANSACTION" => "COMMIT".into(),
        Received::BulkLoad { .. } => "bulk rows".into(),
        Received::Rpc { sql: Some(s), .. } if s.starts_with("INSERT INTO dbo.WIDE") => {
            "INSERT (sp_executesql)".into()
        }
        other => format!("{other:?}"),
    }
}

/// What the connection that began the transaction received from BEGIN on, as labels; and
/// the connections the ordered read came on.
pub fn load_connection(peer: &TdsPeer) -> (Vec<String>, Vec<usize>) {
    let log = peer.received_by_connection();
    let (start, conn) = log
        .iter()
        .enumerate()
        .find_map(|(i, (c, r))| (label(r) == "BEGIN").then_some((i, *c)))
        .expect("a BEGIN was sent");
    let story = log[start..]
        .iter()
        .filter(|(c, _)| *c == conn)
        .map(|(_, r)| label(r))
        .collect();
    let readers = log
        .iter()
        .filter(|(_, r)| matches!(r, Received::Batch(s) if s.contains("ORDER BY s.e0")))
        .map(|(c, _)| *c)
        .filter(|c| *c != conn)
        .collect();
    (story, readers)
}

/// The load connection's story for one bulk-loaded batch: eavpivot's own look at the
/// column types, then tiberius's before INSERT BULK, then the rows.
pub const BULK_BATCH: [&str; 4] = ["SELECT TOP 0", "SELECT TOP 0", "INSERT BULK", "bulk rows"];

/// The load connection's story when every row went in `batches` bulk loads.
pub fn bulk_story(batches: usize) -> Vec<&'static str> {
    let mut story = vec!["BEGIN", "CREATE"];
    for _ in 0..batches {
        story.extend(BULK_BATCH);
    }
    story.extend(["verify", "COMMIT"]);
    story
}

/// Decoded bulk-load rows, `None` = NULL.
pub type Rows = Vec<Vec<Option<Value>>>;

/// The first parameterised INSERT the peer received: its SQL and its parameter values.
pub fn first_insert(peer: &TdsPeer) -> (String, Vec<Option<String>>) {
    peer.received()
        .into_iter()
        .find_map(|r| match r {
            Received::Rpc {
                sql: Some(sql),
                params,
                ..
            } => Some((sql, params.into_iter().map(|(_, v)| v).collect())),
            _ => None,
        })
        .expect("the rows go by sp_executesql")
}

/// Every bulk load the peer received: its INSERT BULK statement, columns and rows.
pub fn bulk_loads(peer: &TdsPeer) -> Vec<(String, Vec<BulkColumn>, Rows)> {
    peer.received()
        .into_iter()
        .filter_map(|r| match r {
            Received::BulkLoad {
                statement,
                columns,
                rows,
            } => Some((statement, columns, rows)),
            _ => None,
        })
        .collect()
}
