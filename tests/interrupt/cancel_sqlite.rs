//! An interrupt stops a SQLite statement in the middle (`sqlite3_interrupt`, called from the
//! interrupting thread while this one steps the statement), instead of letting it run to the
//! end; and a busy database file gives up after `lock_timeout` with one line saying so.
//! In the `interrupt` binary, taking turns, because the interrupt flag is process-wide.

use std::time::{Duration, Instant};

use eavpivot::backend::{self, Backend, ConnectOptions, ConnectionSpec};
use eavpivot::execute::progress;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn open(path: &std::path::Path) -> Box<dyn Backend> {
    let spec = ConnectionSpec::parse(Some(&format!("sqlite:{}", path.display()))).expect("url");
    backend::connect(&spec, &ConnectOptions::default())
        .await
        .expect("open")
}

#[test]
fn an_interrupt_stops_a_running_statement_and_a_lock_times_out() {
    let _turn = crate::serial();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cancel.db");
    std::fs::write(&path, b"").expect("db file");
    runtime().block_on(async {
        let mut db = open(&path).await;
        let _armed = progress::InterruptGuard::arm();
        let interrupter = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            progress::interrupt();
        });
        let started = Instant::now();
        // About a billion rows: minutes, unless stopped.
        let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
                       WHERE x < 1000000000) SELECT COUNT(*) FROM c";
        let err = db
            .query(endless)
            .await
            .expect_err("an interrupted query fails");
        interrupter.join().expect("interrupter");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?}",
            started.elapsed()
        );
        assert!(err.to_string().starts_with("interrupted (Ctrl-C)"), "{err}");

        // A second connection holding the write lock: the first gives up after its timeout.
        let mut other = open(&path).await;
        other
            .execute("CREATE TABLE t (x INTEGER)")
            .await
            .expect("table");
        other.execute("BEGIN IMMEDIATE").await.expect("write lock");
        db.set_lock_timeout(Duration::from_secs(1))
            .await
            .expect("busy timeout");
        let started = Instant::now();
        let err = db
            .execute("INSERT INTO t VALUES (1)")
            .await
            .expect_err("the file is locked");
        let took = started.elapsed();
        assert!(
            (Duration::from_millis(900)..Duration::from_secs(4)).contains(&took),
            "took {took:?}"
        );
        assert!(
            err.to_string()
                .contains("lock_timeout expired waiting for a lock on the database file"),
            "{err}"
        );
        other.execute("ROLLBACK").await.expect("release");
    });
}
