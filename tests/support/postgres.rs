//! A PostgreSQL client for CLI tests that set up tables themselves: the server at
//! `EAVPIVOT_POSTGRES_URL` (default the local `test` database), or a printed skip, or a failure
//! under `EAVPIVOT_REQUIRE_SERVERS=1`.

pub struct Pg {
    pub rt: tokio::runtime::Runtime,
    pub client: tokio_postgres::Client,
    pub url: String,
}

impl Pg {
    /// Run `sql` (several statements allowed), failing the test on error.
    pub fn batch(&self, sql: &str) {
        self.rt
            .block_on(self.client.batch_execute(sql))
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

pub fn connect() -> Option<Pg> {
    let url = std::env::var("EAVPIVOT_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    match rt.block_on(tokio_postgres::connect(&url, tokio_postgres::NoTls)) {
        Ok((client, conn)) => {
            rt.spawn(conn);
            Some(Pg { rt, client, url })
        }
        Err(e) if std::env::var("EAVPIVOT_REQUIRE_SERVERS").as_deref() == Ok("1") => {
            panic!("PostgreSQL at {url} is required but unreachable: {e}")
        }
        Err(e) => {
            eprintln!("skipped: PostgreSQL at {url} is unreachable: {e}");
            None
        }
    }
}
