//! PostgreSQL and MariaDB over real TLS, and the server itself says the session is
//! encrypted (`pg_stat_ssl`, `Ssl_cipher`): not only "it connected".
//!
//! Servers: the main PostgreSQL (5432, Debian's snakeoil certificate, which the test CA does
//! not sign), and the TLS instances `.ci/tls-servers.sh` starts with certificates from its
//! test CA: PostgreSQL 5442 and MariaDB 3316, CA in `$EAVPIVOT_TLS_DIR` (/tmp/eavpivot-tls).
//! Each test skips with a printed reason when its server is absent, unless
//! EAVPIVOT_REQUIRE_SERVERS=1.

use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

use eavpivot::backend::{self, ConnectOptions, ConnectionSpec};
use eavpivot::value::Value;

fn tls_dir() -> PathBuf {
    std::env::var_os("EAVPIVOT_TLS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/eavpivot-tls"))
}

/// The test CA, when the server on `port` is up and the CA exists; else a skip (or a
/// failure under EAVPIVOT_REQUIRE_SERVERS=1).
fn ready(port: u16, what: &str) -> Option<String> {
    let ca = tls_dir().join("ca.pem");
    let up =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1)).is_ok();
    if up && ca.is_file() {
        return Some(ca.display().to_string());
    }
    let why = format!(
        "{what} on 127.0.0.1:{port} or the test CA {} is missing: run .ci/tls-servers.sh",
        ca.display()
    );
    if std::env::var("EAVPIVOT_REQUIRE_SERVERS").as_deref() == Ok("1") {
        panic!("{why}");
    }
    eprintln!("skipping: {why}");
    None
}

/// The rows of `sql` on a fresh connection to `text`, or the error line.
fn query(text: &str, sql: &str) -> Result<Vec<Vec<Value>>, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let spec = ConnectionSpec::parse(Some(text)).map_err(|e| e.to_string())?;
        let options = ConnectOptions {
            connect_timeout: Duration::from_secs(5),
            password: None,
        };
        let mut backend = backend::connect(&spec, &options)
            .await
            .map_err(|e| e.to_string())?;
        backend.query(sql).await.map_err(|e| e.to_string())
    })
}

const PG_SSL: &str = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";

fn pg_encrypted(text: &str) -> Result<bool, String> {
    Ok(query(text, PG_SSL)? == vec![vec![Value::Int(1)]])
}

#[test]
fn postgres_sslmode_require_encrypts_and_disable_does_not() {
    let Some(_) = ready(5432, "PostgreSQL (main cluster, ssl = on)") else {
        return;
    };
    let base = "postgres://postgres@127.0.0.1:5432/test";
    assert_eq!(pg_encrypted(&format!("{base}?sslmode=require")), Ok(true));
    assert_eq!(pg_encrypted(&format!("{base}?sslmode=prefer")), Ok(true));
    assert_eq!(pg_encrypted(base), Ok(true), "prefer is the default");
    assert_eq!(pg_encrypted(&format!("{base}?sslmode=disable")), Ok(false));
    let libpq = "host=127.0.0.1 port=5432 user=postgres dbname=test sslmode=require";
    assert_eq!(pg_encrypted(libpq), Ok(true));
}

#[test]
fn postgres_verify_full_refuses_a_certificate_the_ca_did_not_sign() {
    let Some(ca) = ready(5432, "PostgreSQL (main cluster, ssl = on)") else {
        return;
    };
    let url =
        format!("postgres://postgres@localhost:5432/test?sslmode=verify-full&sslrootcert={ca}");
    let err = pg_encrypted(&url).expect_err("snakeoil is not signed by the test CA");
    assert!(
        err.starts_with("cannot connect to postgres localhost:5432/test"),
        "{err}"
    );
    assert!(
        err.contains("certificate") && err.contains("sslrootcert=FILE"),
        "{err}"
    );
    assert!(!err.contains('\n') && !err.contains("Tcp("), "{err}");
}

#[test]
fn postgres_verify_full_succeeds_with_the_test_ca_and_checks_the_name() {
    let Some(ca) = ready(5442, "PostgreSQL TLS test cluster") else {
        return;
    };
    let dir = tls_dir();
    for host in ["localhost", "127.0.0.1"] {
        let url =
            format!("postgres://postgres@{host}:5442/test?sslmode=verify-full&sslrootcert={ca}");
        assert_eq!(pg_encrypted(&url), Ok(true), "{url}");
    }
    let libpq = format!(
        "host=localhost port=5442 user=postgres dbname=test sslmode=verify-full sslrootcert='{ca}' sslcert={} sslkey={}",
        dir.join("client.pem").display(),
        dir.join("client.key").display()
    );
    assert_eq!(pg_encrypted(&libpq), Ok(true));
    // The certificate names localhost and 127.0.0.1; reached as db.example (libpq's
    // `hostaddr` connects to the address, checks the name): verify-ca accepts it, verify-full
    // does not.
    let misnamed = format!(
        "host=db.example hostaddr=127.0.0.1 port=5442 user=postgres dbname=test sslmode=verify-ca sslrootcert={ca}"
    );
    assert_eq!(pg_encrypted(&misnamed), Ok(true));
    let err = pg_encrypted(&misnamed.replace("verify-ca", "verify-full")).expect_err("name");
    assert!(err.contains("not valid for name"), "{err}");
}

#[test]
fn mariadb_ssl_modes_against_a_tls_instance_and_a_plain_one() {
    let Some(ca) = ready(3316, "MariaDB TLS test instance") else {
        return;
    };
    let cipher = "SHOW SESSION STATUS LIKE 'Ssl_cipher'";
    let encrypted = |text: &str| -> Result<bool, String> {
        let rows = query(text, cipher)?;
        Ok(rows
            .first()
            .and_then(|r| r.get(1))
            .is_some_and(|v| match v {
                Value::Text(t) => !t.is_empty(),
                Value::Bytes(b) => !b.is_empty(),
                _ => false,
            }))
    };
    let base = "mysql://root@127.0.0.1:3316/test";
    for mode in ["REQUIRED", "PREFERRED"] {
        assert_eq!(
            encrypted(&format!("{base}?ssl-mode={mode}")),
            Ok(true),
            "{mode}"
        );
    }
    let verified = format!("{base}?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}");
    assert_eq!(encrypted(&verified), Ok(true));
    assert_eq!(encrypted(&format!("{base}?ssl-mode=DISABLED")), Ok(false));
    let err = encrypted(&format!("{base}?ssl-mode=VERIFY_CA")).expect_err("no CA given");
    assert!(
        err.contains("127.0.0.1:3316") && err.contains("ssl-ca=FILE"),
        "{err}"
    );
    // The main server has no TLS: PREFERRED falls back, REQUIRED says why it cannot.
    if TcpStream::connect("127.0.0.1:3306").is_ok() {
        let plain = "mysql://root@127.0.0.1:3306/test";
        if encrypted(plain) == Ok(false) {
            let err = encrypted(&format!("{plain}?ssl-mode=REQUIRED")).expect_err("no TLS");
            assert!(err.contains("offers no TLS"), "{err}");
        }
    }
}
