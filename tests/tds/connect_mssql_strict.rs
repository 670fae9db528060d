//! SQL Server `encrypt=strict` (TDS 8: TLS before any TDS byte) over real TLS: the TDS test
//! peer wrapped in TLS with a certificate from a CA made here. Trusted through `ca=FILE` it
//! logs in and answers; without that CA, or with a host name the certificate does not carry,
//! the connection fails with one line saying TLS failed, naming the server, never the password.
#![cfg(feature = "mssql")] // needs the mssql driver in the build

use crate::tds_peer;

use std::path::PathBuf;
use std::sync::Arc;

use eavpivot::backend::{self, ConnectOptions, ConnectionSpec};
use eavpivot::value::Value as Cell;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tds_peer::{starts_with, ColType, Column, Response, Script, TdsPeer};

const PASSWORD: &str = "Str1ct;\"pw'@%";

/// A CA (written to `ca.pem` in a temp dir) and a server config whose certificate it signs
/// for `localhost` and 127.0.0.1, offering ALPN `tds/8.0`.
fn tls_setup() -> (tempfile::TempDir, PathBuf, Arc<rustls::ServerConfig>) {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
    let server_key = KeyPair::generate().expect("server key");
    let server = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .expect("server params")
        .signed_by(&server_key, &ca, &ca_key)
        .expect("server certificate");
    let dir = tempfile::tempdir().expect("temp dir");
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, ca.pem()).expect("write CA");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(server.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
        )
        .expect("server config");
    config.alpn_protocols = vec![b"tds/8.0".to_vec()];
    (dir, ca_path, Arc::new(config))
}

fn peer(tls: Arc<rustls::ServerConfig>) -> TdsPeer {
    TdsPeer::start_tls(
        Script::new().on(
            starts_with("SELECT 42"),
            Response::rows(
                vec![Column::new("answer", ColType::Int)],
                vec![vec![Some(42.into())]],
            ),
        ),
        tls,
    )
}

fn options() -> ConnectOptions {
    ConnectOptions {
        connect_timeout: std::time::Duration::from_secs(5),
        password: Some(PASSWORD.to_string()),
    }
}

async fn connect(text: &str) -> Result<Vec<Vec<Cell>>, String> {
    let spec = ConnectionSpec::parse(Some(text)).map_err(|e| e.to_string())?;
    let mut backend = backend::connect(&spec, &options())
        .await
        .map_err(|e| e.to_string())?;
    backend.query("SELECT 42").await.map_err(|e| e.to_string())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn strict_tls_with_the_ca_logs_in_and_answers() {
    let (_dir, ca, tls) = tls_setup();
    let peer = peer(tls);
    let rt = runtime();
    let url = format!(
        "mssql://sa@localhost:{}/eav?encrypt=strict&ca={}",
        peer.port(),
        ca.display()
    );
    assert_eq!(rt.block_on(connect(&url)), Ok(vec![vec![Cell::Int(42)]]));
    let ado = format!(
        "Server=tcp:localhost,{};Database=eav;User Id=sa;Encrypt=strict;TrustServerCertificateCA={}",
        peer.port(),
        ca.display()
    );
    assert_eq!(rt.block_on(connect(&ado)), Ok(vec![vec![Cell::Int(42)]]));
    let jdbc = format!(
        "jdbc:sqlserver://localhost:{};databaseName=eav;user=sa;encrypt=strict;trustServerCertificate=true",
        peer.port()
    );
    assert_eq!(rt.block_on(connect(&jdbc)), Ok(vec![vec![Cell::Int(42)]]));
    assert!(peer.statements().iter().any(|s| s.starts_with("SELECT 42")));
}

#[test]
fn strict_tls_refuses_an_untrusted_or_misnamed_certificate_in_one_line() {
    let (_dir, ca, tls) = tls_setup();
    let peer = peer(tls);
    let rt = runtime();
    let untrusted = format!("mssql://sa@localhost:{}/eav?encrypt=strict", peer.port());
    let misnamed = format!(
        "mssql://sa@localhost:{}/eav?encrypt=strict&ca={}&hostname_in_certificate=db.example",
        peer.port(),
        ca.display()
    );
    for url in [untrusted, misnamed] {
        let err = rt.block_on(connect(&url)).expect_err(&url);
        assert!(err.contains("TLS"), "{err}");
        assert!(err.contains(&format!("localhost:{}", peer.port())), "{err}");
        assert!(!err.contains('\n'), "{err}");
        assert!(!err.contains(PASSWORD), "{err}");
    }
    assert!(
        peer.statements().is_empty(),
        "nothing may be sent before TLS succeeds"
    );
}
