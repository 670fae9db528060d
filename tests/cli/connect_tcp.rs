//! A MariaDB connection string that names a host and port is reached over TCP at that host and
//! port, and stays there. mysql_async, connected over TCP to 127.0.0.1, would by default ask
//! the server for its `@@socket` and reconnect through that file on this machine: through an
//! SSH tunnel or a proxy on localhost, that file may belong to another server than the one
//! named (and a measured link would measure the socket). `?prefer_socket=true` still asks for
//! the socket explicitly.

use eavpivot::value::Value;

use crate::servers::{self, runtime};

/// The session's client address as the server sees it: `localhost` alone over the Unix
/// socket, `host:port` over TCP.
fn client_host(url: &str) -> Option<String> {
    let rt = runtime();
    rt.block_on(async {
        let mut db = servers::connect_or_skip("mariadb", url).await?;
        let rows = db
            .query("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
            .await
            .expect("processlist");
        match rows.first().and_then(|r| r.first()) {
            Some(Value::Text(host)) => Some(host.clone()),
            other => panic!("no host for this session: {other:?}"),
        }
    })
}

#[test]
fn mariadb_over_tcp_stays_on_tcp() {
    let url = servers::mariadb().url;
    let Some(host) = client_host(&url) else {
        return;
    };
    assert!(
        host.contains(':'),
        "{url} was asked for over TCP but the server sees client {host:?} (the Unix socket)"
    );
}
