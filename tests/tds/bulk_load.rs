//! The stream strategy into SQL Server over TDS: the ordered read on a connection of its own,
//! the rows bulk loaded (`INSERT BULK`) inside the load's transaction, batch by batch; where
//! a bulk load cannot be used (a name tiberius refuses, a column it would not fill exactly)
//! the rows go as bound parameters, and a failing fallback says why bulk was not used.

use crate::fixture::*;
use crate::tds_peer::{
    starts_with, BulkColumn, ColType, Column, Received, Response, Script, Value,
};

#[test]
fn stream_reads_on_a_second_connection_and_bulk_loads_inside_the_transaction() {
    let attrs = ["Color", "Size"];
    let (peer, json) = run_stream(created(&attrs, &COLOR_SIZE_ROWS), "stream, bulk load");
    assert_eq!(json["rows_written"], 3);
    let logins = peer
        .received()
        .iter()
        .filter(|r| matches!(r, Received::Login { accepted: true, .. }))
        .count();
    assert_eq!(logins, 2, "the read runs on its own connection");

    let (story, readers) = load_connection(&peer);
    assert_eq!(readers.len(), 1, "read on another connection than the load");
    assert_eq!(
        story,
        bulk_story(1),
        "bulk load on the load's connection, between BEGIN and COMMIT"
    );
    let sent = peer.statements();
    assert!(sent
        .iter()
        .filter(|s| s.starts_with("SELECT TOP 0"))
        .all(|s| s == "SELECT TOP 0 [item_id], [Color], [Size] FROM dbo.WIDE"));

    let loads = bulk_loads(&peer);
    assert_eq!(loads.len(), 1, "one batch");
    let (statement, columns, rows) = &loads[0];
    assert_eq!(
        statement,
        "INSERT BULK dbo.WIDE ([item_id] int, [Color] nvarchar(max), [Size] nvarchar(max)) \
         WITH (CHECK_CONSTRAINTS, KEEP_NULLS, FIRE_TRIGGERS)"
    );
    assert_eq!(
        columns,
        &[
            BulkColumn::new("item_id", "INT4", false),
            BulkColumn::new("Color", "NVARCHAR(max)", true),
            BulkColumn::new("Size", "NVARCHAR(max)", true),
        ]
    );
    assert_eq!(rows, &color_size_wide());
    assert!(
        !peer
            .received()
            .iter()
            .any(|r| matches!(r, Received::Rpc { .. })),
        "no parameterised INSERT when the bulk load fits"
    );
}

#[test]
fn quotes_hyphens_spaces_and_unicode_in_column_names_still_bulk_load() {
    // Bracket-quoted, these pass tiberius's identifier guard: only control characters fail it.
    // In the order eavpivot makes the columns (by attribute): the metadata must match it.
    let attrs = ["Größe x]", "a-b", "it's"];
    let rows = [
        (1, "it's", Some("q")),
        (1, "a-b", Some("h")),
        (2, "Größe x]", Some("ü")),
    ];
    let (peer, json) = run_stream(created(&attrs, &rows), "stream, unusual names");
    assert_eq!(json["rows_written"], 2);
    let (story, _) = load_connection(&peer);
    assert!(story.contains(&"bulk rows".to_string()), "{story:?}");
    assert!(peer
        .statements()
        .contains(&"SELECT TOP 0 [item_id], [Größe x]]], [a-b], [it's] FROM dbo.WIDE".to_string()));
    let loads = bulk_loads(&peer);
    let (statement, _, rows) = &loads[0];
    assert!(
        statement.starts_with(
            "INSERT BULK dbo.WIDE ([item_id] int, [Größe x]]] nvarchar(max), [a-b] nvarchar(max), \
             [it's] nvarchar(max))"
        ),
        "{statement}"
    );
    assert_eq!(
        rows,
        &[
            vec![int(1), None, text("h"), text("q")],
            vec![int(2), text("ü"), None, None],
        ]
    );
}

/// A stream run whose rows cannot be bulk loaded: it writes `rows_written` rows, the load
/// connection's story is `story`, the rows go by bound parameters with the values `values`
/// (NULL cells are literal NULLs, never parameters: tiberius would send them as the untyped
/// NULLTYPE, on which Babelfish drops the connection), nothing by bulk load; returns the
/// INSERT's SQL.
fn falls_back(script: Script, label: &str, story: &[&str], values: &[&str]) -> String {
    let (peer, json) = run_stream(script, label);
    assert_eq!(json["rows_written"], 3);
    let (told, readers) = load_connection(&peer);
    assert_eq!(readers.len(), 1);
    assert_eq!(told, story);
    let (sql, params) = first_insert(&peer);
    let sent: Vec<Option<&str>> = params.iter().map(Option::as_deref).collect();
    let values: Vec<Option<&str>> = values.iter().copied().map(Some).collect();
    assert_eq!(sent, values);
    assert!(bulk_loads(&peer).is_empty());
    sql
}

#[test]
fn a_column_name_tiberius_refuses_falls_back_to_bound_parameters() {
    // A tab is fine for SQL Server inside [...], but tiberius's guard refuses any control
    // character: the load falls back before anything about bulk is sent.
    let attrs = ["Color", "Note\tA"];
    let rows = [
        (1, "Color", Some("Red")),
        (1, "Note\tA", Some("x")),
        (2, "Color", Some("Blue")),
        (3, "Note\tA", None),
    ];
    let sql = falls_back(
        created(&attrs, &rows),
        "stream, refused name",
        &[
            "BEGIN",
            "CREATE",
            "INSERT (sp_executesql)",
            "verify",
            "COMMIT",
        ],
        &["1", "Red", "x", "2", "Blue", "3"],
    );
    assert_eq!(
        sql,
        "INSERT INTO dbo.WIDE ([item_id], [Color], [Note\tA]) VALUES (@P1, @P2, @P3), (@P4, @P5, NULL), (@P6, NULL, NULL)"
    );
}

#[test]
fn a_column_bulk_would_not_fill_exactly_falls_back_to_bound_parameters() {
    // An appended-to table may have other types than eavpivot would create: NVARCHAR(4000),
    // which tiberius would declare as nvarchar(max) in INSERT BULK.
    let attrs = ["Color", "Size"];
    let mut wide = created_columns(&attrs);
    wide[2] = Column::new("Size", ColType::NVarChar);
    falls_back(
        stream_server(&attrs, &COLOR_SIZE_ROWS, wide),
        "stream, inexact column",
        &[
            "BEGIN",
            "CREATE",
            "SELECT TOP 0",
            "INSERT (sp_executesql)",
            "verify",
            "COMMIT",
        ],
        &["1", "Red", "M", "2", "Blue", "3"],
    );
}

#[test]
fn a_long_stream_bulk_loads_batch_by_batch_on_the_same_connection() {
    // 2,500 entities: the backend loads every 2,000 wide rows, so two bulk loads, the
    // first spanning many TDS packets.
    let colors: Vec<String> = (0..2500).map(|i| format!("colour {i}")).collect();
    let rows: Vec<Kv> = (0..2500)
        .flat_map(|i| {
            let size = (i % 2 == 0).then_some("M");
            [
                (i as i64 + 1, "Color", Some(colors[i].as_str())),
                (i as i64 + 1, "Size", size),
            ]
        })
        .collect();
    let attrs = ["Color", "Size"];
    let (peer, json) = run_stream(created(&attrs, &rows), "stream, two batches");
    assert_eq!(json["rows_written"], 2500);
    let (story, _) = load_connection(&peer);
    assert_eq!(story, bulk_story(2));
    let loads = bulk_loads(&peer);
    let sizes: Vec<usize> = loads.iter().map(|(_, _, rows)| rows.len()).collect();
    assert_eq!(sizes, [2000, 500]);
    let all: Vec<&Vec<Option<Value>>> = loads.iter().flat_map(|(_, _, rows)| rows).collect();
    for (i, row) in all.iter().enumerate() {
        let size = (i % 2 == 0).then(|| "M".into());
        let expected = vec![int(i as i64 + 1), text(&colors[i]), size];
        assert_eq!(**row, expected, "row {i}");
    }
}

#[test]
fn a_failing_fallback_insert_names_the_table_and_why_bulk_was_not_used() {
    let attrs = ["Color", "Note\tA"];
    let rows = [(1, "Color", Some("Red")), (1, "Note\tA", Some("x"))];
    let refusal = Script::new().on(
        starts_with("INSERT INTO dbo.WIDE"),
        Response::error(8152, "String or binary data would be truncated."),
    );
    let (peer, out) = run_on_peer(
        "stream, failing fallback",
        ahead(refusal, created(&attrs, &rows)),
        &["--strategy", "stream"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("error"))
        .expect("an error line");
    assert!(
        line.contains(
            "loading rows into dbo.WIDE (by INSERT: tiberius refuses the table or a column name \
             for a bulk load): SQL Server error 8152"
        ),
        "{stderr}"
    );
    assert!(line.contains("rolled back"), "{stderr}");
    assert!(
        line.contains("streaming dbo.EAV: "),
        "names the source: {stderr}"
    );
    let (story, _) = load_connection(&peer);
    assert_eq!(
        story,
        [
            "BEGIN",
            "CREATE",
            "INSERT (sp_executesql)",
            "Batch(\"IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION\")"
        ]
    );
}
