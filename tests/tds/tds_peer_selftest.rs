//! Drives the TDS test peer with the real tiberius client, so every other
//! MSSQL test can trust it.
#![cfg(feature = "mssql")] // needs the mssql driver in the build

use crate::tds_peer;

use tds_peer::{
    contains, starts_with, when, BulkColumn, ColType, Column, Received, Response, Script, TdsPeer,
};
use tiberius::{AuthMethod, Client, ColumnData, Config, EncryptionLevel, IntoRow, TokenRow};
use tokio::net::TcpStream;
use tokio_util::compat::{Compat, TokioAsyncWriteCompatExt};

type TestClient = Client<Compat<TcpStream>>;

async fn connect_with(config: Config) -> tiberius::Result<TestClient> {
    let tcp = TcpStream::connect(config.get_addr()).await?;
    tcp.set_nodelay(true)?;
    Client::connect(config, tcp.compat_write()).await
}

async fn connect(peer: &TdsPeer) -> TestClient {
    let config = peer.tiberius_config("sa", "secret", Some("eav"));
    connect_with(config).await.expect("connect to tds peer")
}

fn server_error(err: tiberius::error::Error) -> (u32, String) {
    match err {
        tiberius::error::Error::Server(e) => (e.code(), e.message().to_string()),
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn people_columns() -> Vec<Column> {
    vec![
        Column::new("name", ColType::NVarChar),
        Column::new("age", ColType::Int),
        Column::new("big", ColType::BigInt),
        Column::new("flag", ColType::Bit),
        Column::new("score", ColType::Float),
        Column::new("notes", ColType::NVarCharMax),
    ]
}

#[tokio::test]
async fn query_returns_typed_columns_with_nulls() {
    let rows = vec![
        vec![
            Some("Ann".into()),
            Some(41.into()),
            Some(5_000_000_000i64.into()),
            Some(true.into()),
            Some(1.5.into()),
            Some("long ü text".into()),
        ],
        vec![None, None, None, None, None, None],
        vec![
            Some("".into()),
            Some((-7).into()),
            Some((-1i64).into()),
            Some(false.into()),
            Some(0.0.into()),
            Some("".into()),
        ],
    ];
    let peer = TdsPeer::start(Script::new().on(
        starts_with("SELECT name"),
        Response::rows(people_columns(), rows),
    ));
    let mut client = connect(&peer).await;
    let rows = client
        .simple_query("SELECT name, age, big, flag, score, notes FROM people")
        .await
        .expect("query")
        .into_first_result()
        .await
        .expect("rows");
    assert_eq!(rows.len(), 3);
    let names: Vec<&str> = rows[0].columns().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["name", "age", "big", "flag", "score", "notes"]);
    assert_eq!(rows[0].get::<&str, _>(0), Some("Ann"));
    assert_eq!(rows[0].get::<i32, _>(1), Some(41));
    assert_eq!(rows[0].get::<i64, _>(2), Some(5_000_000_000));
    assert_eq!(rows[0].get::<bool, _>(3), Some(true));
    assert_eq!(rows[0].get::<f64, _>(4), Some(1.5));
    assert_eq!(rows[0].get::<&str, _>(5), Some("long ü text"));
    assert_eq!(rows[1].get::<&str, _>(0), None);
    assert_eq!(rows[1].get::<i32, _>(1), None);
    assert_eq!(rows[1].get::<i64, _>(2), None);
    assert_eq!(rows[1].get::<bool, _>(3), None);
    assert_eq!(rows[1].get::<f64, _>(4), None);
    assert_eq!(rows[1].get::<&str, _>(5), None);
    assert_eq!(rows[2].get::<&str, _>(0), Some(""));
    assert_eq!(rows[2].get::<i32, _>(1), Some(-7));
    assert_eq!(rows[2].get::<&str, _>(5), Some(""));
}

#[tokio::test]
async fn insert_reports_row_count() {
    let peer = TdsPeer::start(Script::new().on(contains("INSERT INTO"), Response::RowCount(3)));
    let mut client = connect(&peer).await;
    let result = client
        .execute("INSERT INTO t VALUES (1), (2), (3)", &[])
        .await
        .expect("execute");
    assert_eq!(result.rows_affected(), &[3]);
    // Unmatched statements get a DONE without a count.
    let result = client
        .execute("UPDATE t SET a = 1", &[])
        .await
        .expect("execute");
    assert_eq!(result.total(), 0);
}

#[tokio::test]
async fn error_token_surfaces_as_server_error() {
    let peer = TdsPeer::start(Script::new().on(
        contains("missing_table"),
        Response::error(208, "Invalid object name 'missing_table'."),
    ));
    let mut client = connect(&peer).await;
    // tiberius reports an ERROR either when sending (it reads ahead to the
    // first result set) or while reading rows; accept both.
    let outcome = match client.simple_query("SELECT * FROM missing_table").await {
        Ok(stream) => stream.into_first_result().await.map(|_| ()),
        Err(e) => Err(e),
    };
    let err = outcome.expect_err("must fail");
    assert_eq!(
        server_error(err),
        (208, "Invalid object name 'missing_table'.".to_string())
    );
    // Through an RPC too, and the connection stays usable afterwards.
    let err = client
        .execute("DELETE FROM missing_table", &[])
        .await
        .expect_err("must fail");
    assert_eq!(server_error(err).0, 208);
    let rows = client.simple_query("SELECT 1").await.expect("send");
    assert!(rows.into_first_result().await.expect("ok").is_empty());
}

#[tokio::test]
async fn sp_executesql_parameters_are_recorded() {
    let peer = TdsPeer::start(Script::new().on(
        contains("FROM eav WHERE"),
        Response::rows(
            vec![Column::new("v", ColType::NVarChar)],
            vec![vec![Some("hit".into())]],
        ),
    ));
    let mut client = connect(&peer).await;
    let none: Option<&str> = None;
    let row = client
        .query(
            "SELECT v FROM eav WHERE a = @P1 AND n = @P2 AND b = @P3 AND f = @P4 AND x = @P5",
            &[&"color", &42i32, &7_000_000_000i64, &true, &none],
        )
        .await
        .expect("query")
        .into_row()
        .await
        .expect("row")
        .expect("one row");
    assert_eq!(row.get::<&str, _>(0), Some("hit"));
    let received = peer.received();
    let expected = Received::Rpc {
        proc: "sp_executesql".into(),
        sql: Some(
            "SELECT v FROM eav WHERE a = @P1 AND n = @P2 AND b = @P3 AND f = @P4 AND x = @P5"
                .into(),
        ),
        params: vec![
            ("@P1".into(), Some("color".into())),
            ("@P2".into(), Some("42".into())),
            ("@P3".into(), Some("7000000000".into())),
            ("@P4".into(), Some("1".into())),
            ("@P5".into(), None),
        ],
    };
    assert_eq!(received.last(), Some(&expected));
}

#[tokio::test]
async fn other_parameter_types_render_as_text() {
    let peer = TdsPeer::start(Script::new());
    let mut client = connect(&peer).await;
    let bytes: &[u8] = &[0x01, 0xAB];
    let num = tiberius::numeric::Numeric::new_with_scale(-12345, 2);
    let long = "z".repeat(5000);
    client
        .execute(
            "EXEC p @P1, @P2, @P3, @P4, @P5",
            &[&1.25f64, &num, &bytes, &long.as_str(), &255u8],
        )
        .await
        .expect("execute");
    let Some(Received::Rpc { params, .. }) = peer.received().pop() else {
        panic!("no rpc recorded");
    };
    let values: Vec<Option<String>> = params.into_iter().map(|(_, v)| v).collect();
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        values,
        vec![s("1.25"), s("-123.45"), s("0x01AB"), Some(long), s("255")]
    );
}

#[tokio::test]
async fn wrong_password_fails_login() {
    let peer = TdsPeer::start(Script::new());
    let config = peer.tiberius_config("alice", "wrong", None);
    let err = connect_with(config).await.expect_err("login must fail");
    assert_eq!(
        server_error(err),
        (18456, "Login failed for user 'alice'.".to_string())
    );
    assert_eq!(
        peer.received(),
        vec![Received::Login {
            user: "alice".into(),
            database: String::new(),
            app_name: "tiberius".into(),
            accepted: false,
        }]
    );
}

#[tokio::test]
async fn unknown_database_fails_login() {
    let peer = TdsPeer::start(Script::new());
    let config = peer.tiberius_config("bob", "pw", Some("nosuchdb"));
    let err = connect_with(config).await.expect_err("login must fail");
    let (code, message) = server_error(err);
    assert_eq!(code, 4060);
    assert_eq!(
        message,
        "Cannot open database \"nosuchdb\" requested by the login. The login failed."
    );
}

#[tokio::test]
async fn encryption_demand_fails_clearly() {
    let peer = TdsPeer::start(Script::new());
    let mut config = peer.tiberius_config("sa", "pw", None);
    config.encryption(EncryptionLevel::Required);
    let err = connect_with(config).await.expect_err("must fail");
    assert!(err.to_string().contains("encryption"), "{err}");
    let mut config = peer.tiberius_config("sa", "pw", None);
    config.encryption(EncryptionLevel::Off);
    config.trust_cert();
    // tiberius starts TLS; the peer closes the connection.
    let err = connect_with(config)
        .await
        .expect_err("TLS must not succeed");
    assert!(err.to_string().to_lowercase().contains("tls"), "{err}");
}

#[tokio::test]
async fn records_exact_sequence_across_connections() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = calls.clone();
    let script = Script::new()
        .on(
            when(move |sql| {
                sql.contains("flaky")
                    && counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0
            }),
            Response::error(1205, "deadlock victim"),
        )
        .on(
            contains("two results"),
            Response::Multi(vec![
                Response::rows(
                    vec![Column::new("a", ColType::Int)],
                    vec![vec![Some(1.into())]],
                ),
                Response::RowCount(2),
                Response::rows(
                    vec![Column::new("b", ColType::Int)],
                    vec![vec![Some(2.into())]],
                ),
            ]),
        );
    let peer = TdsPeer::start(script);
    {
        let mut client = connect(&peer).await;
        client
            .simple_query("SET NOCOUNT ON")
            .await
            .expect("send")
            .into_results()
            .await
            .expect("ok");
        let results = client
            .simple_query("SELECT 'two results'")
            .await
            .expect("send")
            .into_results()
            .await
            .expect("ok");
        assert_eq!(results.len(), 2);
        assert_eq!(results[1][0].get::<i32, _>(0), Some(2));
        client.close().await.expect("close");
    }
    let mut client = connect(&peer).await;
    assert!(client.execute("EXEC flaky", &[]).await.is_err());
    assert!(client.execute("EXEC flaky", &[]).await.is_ok());
    let login = Received::Login {
        user: "sa".into(),
        database: "eav".into(),
        app_name: "tiberius".into(),
        accepted: true,
    };
    let rpc = |sql: &str| Received::Rpc {
        proc: "sp_executesql".into(),
        sql: Some(sql.into()),
        params: vec![],
    };
    assert_eq!(
        peer.received(),
        vec![
            login.clone(),
            Received::Batch("SET NOCOUNT ON".into()),
            Received::Batch("SELECT 'two results'".into()),
            login,
            rpc("EXEC flaky"),
            rpc("EXEC flaky"),
        ]
    );
    assert_eq!(peer.statements().len(), 4);
}

#[tokio::test]
async fn bulk_insert_rows_are_recorded() {
    let columns = vec![
        Column::new("entity", ColType::NVarChar),
        Column::new("n", ColType::Int),
        Column::new("big", ColType::BigInt),
    ];
    let peer = TdsPeer::start(
        Script::new().on(starts_with("SELECT TOP 0"), Response::rows(columns, vec![])),
    );
    let mut client = connect(&peer).await;
    let mut bulk = client.bulk_insert("dbo.wide").await.expect("bulk start");
    bulk.send(("e1", 1i32, 10i64).into_row())
        .await
        .expect("row 1");
    let mut row = TokenRow::new();
    row.push(ColumnData::String(None));
    row.push(ColumnData::I32(None));
    row.push(ColumnData::I64(Some(-3)));
    bulk.send(row).await.expect("row 2");
    let result = bulk.finalize().await.expect("finalize");
    assert_eq!(result.total(), 2);
    let received = peer.received();
    assert_eq!(
        received[1],
        Received::Batch("SELECT TOP 0 * FROM dbo.wide".into())
    );
    let insert_bulk = match &received[2] {
        Received::Batch(sql) => sql.clone(),
        other => panic!("expected INSERT BULK, got {other:?}"),
    };
    assert_eq!(
        insert_bulk,
        "INSERT BULK dbo.wide ([entity] nvarchar(max), [n] int, [big] bigint)"
    );
    assert_eq!(
        received[3],
        Received::BulkLoad {
            statement: insert_bulk,
            columns: vec![
                BulkColumn::new("entity", "NVARCHAR(8000)", true),
                BulkColumn::new("n", "INTN(4)", true),
                BulkColumn::new("big", "INTN(8)", true),
            ],
            rows: vec![
                vec![Some("e1".into()), Some(1.into()), Some(10i64.into())],
                vec![None, None, Some((-3i64).into())],
            ]
        }
    );
}

/// Every scripted column type through a bulk load: the peer decodes each by
/// the COLMETADATA the client sent, fixed-length NOT NULL INT4 included.
#[tokio::test]
async fn bulk_load_decodes_every_column_type_with_nulls() {
    let columns = vec![
        Column::new("id", ColType::IntNotNull),
        Column::new("n", ColType::Int),
        Column::new("big", ColType::BigInt),
        Column::new("flag", ColType::Bit),
        Column::new("score", ColType::Float),
        Column::new("short", ColType::NVarChar),
        Column::new("long", ColType::NVarCharMax),
    ];
    let peer = TdsPeer::start(Script::new().on(
        starts_with("SELECT TOP 0 [id], [n]"),
        Response::rows(columns, vec![]),
    ));
    let mut client = connect(&peer).await;
    let names = [
        "[id]", "[n]", "[big]", "[flag]", "[score]", "[short]", "[long]",
    ];
    let mut bulk = client
        .bulk_insert_columns("dbo.t", &names)
        .await
        .expect("bulk start");
    let long = "ü".repeat(5000);
    bulk.send((7i32, -2i32, i64::MIN, true, 0.1f64, "kurz", long.as_str()).into_row())
        .await
        .expect("row 1");
    let mut row = TokenRow::new();
    row.push(ColumnData::I32(Some(8)));
    for null in [
        ColumnData::I32(None),
        ColumnData::I64(None),
        ColumnData::Bit(None),
        ColumnData::F64(None),
        ColumnData::String(None),
        ColumnData::String(None),
    ] {
        row.push(null);
    }
    bulk.send(row).await.expect("row 2");
    let mut row = TokenRow::new();
    row.push(ColumnData::I32(Some(9)));
    row.push(ColumnData::I32(Some(0)));
    row.push(ColumnData::I64(Some(0)));
    row.push(ColumnData::Bit(Some(false)));
    row.push(ColumnData::F64(Some(-0.0)));
    row.push(ColumnData::String(Some("".into())));
    row.push(ColumnData::String(Some("".into())));
    bulk.send(row).await.expect("row 3");
    assert_eq!(bulk.finalize().await.expect("finalize").total(), 3);

    let Some((conn, Received::BulkLoad { columns, rows, .. })) =
        peer.received_by_connection().pop()
    else {
        panic!("no bulk load recorded: {:?}", peer.received());
    };
    assert_eq!(conn, 1);
    let described: Vec<(&str, &str, bool)> = columns
        .iter()
        .map(|c| (c.name.as_str(), c.ty.as_str(), c.nullable))
        .collect();
    assert_eq!(
        described,
        [
            ("id", "INT4", false),
            ("n", "INTN(4)", true),
            ("big", "INTN(8)", true),
            ("flag", "BITN", true),
            ("score", "FLTN(8)", true),
            ("short", "NVARCHAR(8000)", true),
            ("long", "NVARCHAR(max)", true),
        ]
    );
    assert_eq!(
        rows,
        vec![
            vec![
                Some(7.into()),
                Some((-2).into()),
                Some(i64::MIN.into()),
                Some(true.into()),
                Some(0.1.into()),
                Some("kurz".into()),
                Some(long.into()),
            ],
            vec![Some(8.into()), None, None, None, None, None, None],
            vec![
                Some(9.into()),
                Some(0.into()),
                Some(0i64.into()),
                Some(false.into()),
                Some((-0.0).into()),
                Some("".into()),
                Some("".into()),
            ],
        ]
    );
}

#[tokio::test]
async fn large_messages_span_packets() {
    let rows = (0..3000)
        .map(|i| vec![Some(format!("row-{i:05}-{}", "x".repeat(20)).into())])
        .collect();
    let peer = TdsPeer::start(Script::new().on(
        contains("big"),
        Response::rows(vec![Column::new("v", ColType::NVarChar)], rows),
    ));
    let mut config = peer.tiberius_config("sa", "pw", None);
    config.packet_size(512);
    let mut client = connect_with(config).await.expect("connect");
    let long_sql = format!("SELECT v FROM big WHERE v IN ('{}')", "y".repeat(10_000));
    let rows = client
        .simple_query(long_sql.as_str())
        .await
        .expect("send")
        .into_first_result()
        .await
        .expect("rows");
    assert_eq!(rows.len(), 3000);
    assert_eq!(
        rows[2999].get::<&str, _>(0),
        Some(format!("row-02999-{}", "x".repeat(20)).as_str())
    );
    assert_eq!(peer.statements(), vec![long_sql]);
}

#[tokio::test]
async fn attention_is_acknowledged() {
    let peer = TdsPeer::start(Script::new());
    let mut client = connect(&peer).await;
    client.cancel_query().await.expect("cancel acknowledged");
    assert_eq!(peer.received().last(), Some(&Received::Attention));
}

#[test]
fn peer_outlives_runtimes_and_shuts_down() {
    let peer = TdsPeer::start(Script::new());
    for _ in 0..2 {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("rt");
        rt.block_on(async {
            let mut client = connect(&peer).await;
            client
                .simple_query("SELECT 1")
                .await
                .expect("send")
                .into_results()
                .await
                .expect("ok");
        });
    }
    let port = peer.port();
    peer.shutdown();
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    let _ = AuthMethod::None;
}
