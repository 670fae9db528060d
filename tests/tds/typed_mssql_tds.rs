//! `column_type: infer` on SQL Server, proven over the real TDS protocol against the scripted
//! peer (no SQL Server involved): discovery's one scan carries the values, and the dry run
//! prints the typed CREATE TABLE, the pushdown's CASTs and the round-trip verification.
#![cfg(feature = "mssql")] // needs the mssql driver in the build

use crate::fixture::{before_the_load, eavpivot, int, text, url, PASSWORD};
use crate::tds_peer;

use tds_peer::{contains, ColType, Column, Response, Script, TdsPeer};

const JOB: &str = "name: typed_tds
source: { table: dbo.EAV }
entity: [item_id]
attribute: attr
value: val
pivot: { column_type: infer, infer: { widths: exact, numbers: text } }
target: { table: dbo.WIDE }
strategy: pushdown
";

/// The values scan (`a, b, v, e0`): attribute keys carry SQL Server's sentinel.
fn server() -> Script {
    let scan_rows = [
        ("qty|", "12", 1),
        ("qty|", "-7", 2),
        ("zip|", "00501", 1),
        ("price|", "0.40", 1),
        ("price|", "12.50", 2),
        ("born|", "2024-02-29", 1),
        ("name|", "日本", 2),
    ];
    let scan = Script::new().on(
        contains("AS b, s.v, s.e0"),
        Response::rows(
            vec![
                Column::new("a", ColType::NVarCharMax),
                Column::new("b", ColType::Int),
                Column::new("v", ColType::NVarCharMax),
                Column::new("e0", ColType::Int),
            ],
            scan_rows
                .iter()
                .map(|(a, v, e)| vec![text(a), int(2 * v.chars().count() as i64), text(v), int(*e)])
                .collect(),
        ),
    );
    before_the_load(scan, Vec::new())
}

#[test]
fn dry_run_types_columns_casts_and_verifies_on_sql_server() {
    let peer = TdsPeer::start(server());
    let dir = tempfile::tempdir().expect("temp dir");
    let job = dir.path().join("typed_tds.yaml");
    std::fs::write(&job, JOB).expect("job");
    let out = eavpivot(
        &["run", job.to_str().expect("utf-8"), "--dry-run"],
        &url(peer.port(), PASSWORD),
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}\n{printed}");
    // The session settings (lock timeout, connection id) come first; then the job's own.
    let sent: Vec<String> = peer
        .statements()
        .into_iter()
        .filter(|s| !s.starts_with("SET LOCK_TIMEOUT") && s != "SELECT @@SPID")
        .collect();
    // The value's type first (how it is read), then one discovery scan with the values.
    assert!(
        sent[0].starts_with("EXEC sp_describe_first_result_set @tsql = N'SELECT s.v "),
        "{sent:#?}"
    );
    assert!(
        sent[1].contains("s.v, s.e0"),
        "one discovery scan with values: {sent:#?}"
    );
    assert!(
        !sent.iter().any(|s| s.contains("GROUP BY s.a")),
        "{sent:#?}"
    );
    for want in [
        "[qty] SMALLINT",
        "[price] DECIMAL(4,2)",
        "[born] DATE",
        "[zip] NVARCHAR(5)",
        "[name] NVARCHAR(2)",
        // The aggregate once, in the derived table; converted outside it only where it
        // prints back (the round-trip check rides on the pivot: no second scan).
        "MAX(CASE WHEN s.a = N'qty|' THEN s.v END) AS c3",
        "CASE WHEN CAST(CAST(p.c3 AS SMALLINT) AS NVARCHAR(MAX)) = CAST(p.c3 AS NVARCHAR(MAX)) THEN CAST(p.c3 AS SMALLINT) END AS [qty]",
        "--   zip -> zip (dbo.WIDE) NVARCHAR(5): text: '00501' for entity 1",
        "CAST(CAST(p.c2 AS DECIMAL(4,2)) AS NVARCHAR(MAX)) = CAST(p.c2 AS NVARCHAR(MAX))",
    ] {
        assert!(
            printed.contains(want),
            "dry run must print {want}:\n{printed}"
        );
    }
    assert!(
        !printed.contains("WHERE s.v IS NOT NULL AND ("),
        "no separate round-trip scan of the source:\n{printed}"
    );
}
