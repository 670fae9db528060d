//! Citus: the real binary against a Citus coordinator, the source distributed by entity.
//! Every table the run creates must be distributed and co-located with the source (so the
//! pivot runs on the workers), `replace`, `merge` and `append` must work with both
//! strategies, text and typed, a kill -9 anywhere must leave no staging table on the
//! coordinator and no staging shard on any worker, a lock held on a worker must stop the
//! run within its lock timeout, and Ctrl-C must stop the statement on the workers too.
//!
//! The coordinator is `EAVPIVOT_CITUS_URL` (default `postgres://postgres@127.0.0.1:9700/postgres`,
//! started by `.ci/citus.sh`), reached with TLS as a user would (no `sslmode=disable`: Citus's
//! self-signed X.509 v1 certificate must be accepted under the default `prefer`). The workers
//! are read from the coordinator's `pg_dist_node`. Unreachable: skipped with the reason, or a
//! failure when `EAVPIVOT_REQUIRE_SERVERS=1` and `EAVPIVOT_CITUS_URL` is set.

use crate::kv_fixture::{job_yaml, Fixture};
use crate::servers::colocation;
use crate::{db_children, servers};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use eavpivot::backend::{self, Backend, ConnectOptions, ConnectionSpec};
use eavpivot::value::Value;
use servers::*;

const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:9700/postgres";
const ENTITIES: i64 = 200;
const ATTRIBUTES: i64 = 4;

fn url() -> (String, bool) {
    match std::env::var("EAVPIVOT_CITUS_URL") {
        Ok(url) if !url.trim().is_empty() => (url, true),
        _ => (DEFAULT_URL.to_string(), false),
    }
}

/// The coordinator, or `None` with the reason printed (a failure when the URL was given and
/// servers are required).
/// The tests of this file share one cluster and each distributes, undistributes and drops
/// tables: run in parallel, two of them met in a distributed deadlock that Citus broke by
/// cancelling one (seen once in four runs of the suite; the run rolled back as it should, but
/// the test failed). One at a time, like two migrations a user would not run at once.
async fn one_test_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static CLUSTER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    CLUSTER.lock().await
}

async fn coordinator() -> Option<Box<dyn Backend>> {
    let (url, given) = url();
    if given {
        return connect_or_skip("citus", &url).await;
    }
    match connect(&url).await {
        Ok(db) => Some(db),
        Err(e) => {
            eprintln!("skipped: no Citus coordinator at {url} ({e}); EAVPIVOT_CITUS_URL names one (.ci/citus.sh starts one)");
            None
        }
    }
}

async fn connect(url: &str) -> Result<Box<dyn Backend>, String> {
    let spec = ConnectionSpec::parse(Some(url)).map_err(|e| e.to_string())?;
    let options = ConnectOptions {
        connect_timeout: Duration::from_secs(5),
        password: None,
    };
    let mut db = backend::connect(&spec, &options)
        .await
        .map_err(|e| e.to_string())?;
    let citus = db
        .query("SELECT count(*) FROM pg_extension WHERE extname = 'citus'")
        .await
        .map_err(|e| e.to_string())?;
    match int(&citus) {
        1 => Ok(db),
        _ => Err(format!("{url} is PostgreSQL without the citus extension")),
    }
}

fn int(rows: &[Vec<Value>]) -> i64 {
    rows.first()
        .and_then(|r| r.first())
        .and_then(Value::as_i64)
        .unwrap_or(-1)
}

/// Every worker, connected directly, with shards made visible in `pg_class`.
async fn workers(coord: &mut dyn Backend) -> Vec<Box<dyn Backend>> {
    let (url, _) = url();
    let rows = coord
        .query("SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 AND isactive")
        .await
        .expect("workers");
    let (user_db, rest) = url.split_once('@').expect("user@ in the URL");
    let after_host = rest.split_once('/').map(|(_, d)| d).unwrap_or("postgres");
    let mut out = Vec::new();
    for row in rows {
        let host = row[0].as_text().expect("node name");
        let port = row[1].as_i64().expect("node port");
        let worker = format!("{user_db}@{host}:{port}/{after_host}");
        let mut db = connect_or_skip("citus worker", &worker)
            .await
            .expect("a worker of the running coordinator");
        db.execute("SET citus.show_shards_for_app_name_prefixes = '*'")
            .await
            .expect("show shards");
        out.push(db);
    }
    assert!(!out.is_empty(), "the coordinator has no workers");
    out
}

/// A source of `ENTITIES` × `ATTRIBUTES` rows, distributed by entity, and a directory for jobs.
async fn fixture(db: &mut dyn Backend, case: &str) -> Fixture {
    let fx = Fixture::empty(db, format!("citus{}_{case}", std::process::id())).await;
    let source = &fx.source;
    db.execute(&format!(
        "CREATE TABLE {source} (entity_id INT, attr TEXT, val TEXT)"
    ))
    .await
    .expect("create source");
    db.execute(&format!(
        "SELECT create_distributed_table('{source}', 'entity_id')"
    ))
    .await
    .expect("distribute source");
    // a1 numbers (typed: integer), the others text.
    db.execute(&format!(
        "INSERT INTO {source} SELECT e, 'a' || a, CASE WHEN a = 1 THEN (e * 7)::text ELSE 'v' || e || '-' || a END \
         FROM generate_series(1, {ENTITIES}) e, generate_series(1, {ATTRIBUTES}) a"
    ))
    .await
    .expect("fill source");
    fx
}

/// The fixture's `citus` job into its target with `if_exists`, and `extra` top-level lines.
fn citus_job(fx: &Fixture, if_exists: &str, extra: &str) -> PathBuf {
    fx.job_file(
        &format!("{if_exists}.yaml"),
        &job_yaml(
            "citus",
            &fx.source,
            &fx.target,
            &format!("lock_timeout: 2\n{extra}"),
            &format!(", if_exists: {if_exists}"),
        ),
    )
}

/// Staging tables this fixture's runs left: on the coordinator (tables and distributed
/// tables' metadata) and as shards on any worker.
async fn leftovers(
    coord: &mut dyn Backend,
    workers: &mut [Box<dyn Backend>],
    prefix: &str,
) -> Vec<String> {
    let like = format!("'{prefix}%eavpivot%'");
    let mut left = names(
        coord,
        &format!("SELECT relname::text FROM pg_class WHERE relname LIKE {like}"),
    )
    .await;
    left.extend(
        names(
            coord,
            &format!(
                "SELECT 'metadata ' || logicalrelid::text FROM pg_dist_partition WHERE logicalrelid::text LIKE {like}"
            ),
        )
        .await,
    );
    for (i, w) in workers.iter_mut().enumerate() {
        let sql =
            format!("SELECT 'worker {i}: ' || relname FROM pg_class WHERE relname LIKE {like}");
        left.extend(names(w.as_mut(), &sql).await);
    }
    left
}

/// Leftovers, given a few seconds: a killed client's transaction is rolled back on the
/// workers once its coordinator backend notices the closed connection.
async fn settled_leftovers(
    coord: &mut dyn Backend,
    workers: &mut [Box<dyn Backend>],
    prefix: &str,
) -> Vec<String> {
    let started = Instant::now();
    loop {
        let left = leftovers(coord, workers, prefix).await;
        if left.is_empty() || started.elapsed() > Duration::from_secs(15) {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

fn expected_cell(entity: i64, attribute: i64) -> String {
    match attribute {
        1 => (entity * 7).to_string(),
        a => format!("v{entity}-{a}"),
    }
}

async fn check_target(db: &mut dyn Backend, fx: &Fixture, what: &str) {
    let table = read_table(db, "postgres", &fx.target).await;
    assert_eq!(table.len(), ENTITIES as usize, "{what}: rows");
    for (entity, cells) in &table {
        for a in 1..=ATTRIBUTES {
            assert_eq!(
                cells.get(&format!("a{a}")),
                Some(&expected_cell(*entity, a)),
                "{what}: entity {entity} a{a}"
            );
        }
    }
    let source = colocation(db, &fx.source).await;
    assert!(source.is_some(), "the source is distributed");
    assert_eq!(
        colocation(db, &fx.target).await,
        source,
        "{what}: the target is distributed and co-located with the source"
    );
}

fn run_ok(args: &[&str], what: &str) -> String {
    let (url, _) = url();
    let out = run(args, &url);
    let err = stderr(&out);
    assert!(out.status.success(), "{what}: {err}");
    err
}

/// replace (new and existing), merge and append, pushdown and stream, text and typed: the
/// target ends distributed and co-located, the plan says so, and nothing is left behind.
#[tokio::test(flavor = "current_thread")]
async fn every_mode_and_strategy_keeps_the_target_distributed_and_co_located() {
    let _cluster = one_test_at_a_time().await;
    let Some(mut db) = coordinator().await else {
        return;
    };
    let mut workers = workers(db.as_mut()).await;
    for (typing, extra) in [("text", ""), ("typed", "pivot: {column_type: infer}\n")] {
        for strategy in ["pushdown", "stream"] {
            let case = format!("{}{}", &typing[..2], &strategy[..2]);
            let fx = fixture(db.as_mut(), &case).await;
            let what = format!("{typing} {strategy}");
            for if_exists in ["replace", "replace", "merge"] {
                let job = citus_job(&fx, if_exists, extra);
                let args = ["run", job.to_str().expect("path"), "--strategy", strategy];
                let err = run_ok(&args, &format!("{what} {if_exists}"));
                assert!(
                    err.contains("distributed") && err.contains("co-located"),
                    "{what} {if_exists}: the plan says why it distributes: {err}"
                );
                check_target(db.as_mut(), &fx, &format!("{what} {if_exists}")).await;
            }
            if typing == "typed" {
                let ty = db
                    .query(&format!(
                        "SELECT data_type FROM information_schema.columns WHERE table_name = '{}' AND column_name = 'a1'",
                        fx.target
                    ))
                    .await
                    .expect("column type");
                let ty = ty.first().and_then(|r| r[0].as_text()).unwrap_or_default();
                assert!(
                    ty.contains("int"),
                    "{what}: a1 typed as an integer, got {ty}"
                );
            }
            // append: the source's entities are in the target already, so the key refuses
            // them; with the target emptied the rows go in, into the distributed table.
            db.execute(&format!("DELETE FROM {}", fx.target))
                .await
                .expect("empty the target");
            let job = citus_job(&fx, "append", extra);
            run_ok(
                &["run", job.to_str().expect("path"), "--strategy", strategy],
                &format!("{what} append"),
            );
            check_target(db.as_mut(), &fx, &format!("{what} append")).await;
            let left = leftovers(db.as_mut(), &mut workers, &fx.prefix).await;
            assert!(left.is_empty(), "{what}: left behind: {left:?}");
            fx.drop_tables(db.as_mut()).await;
        }
    }
}

/// `target.distribute: off` keeps a local table, and the dry run shows the call it makes.
#[tokio::test(flavor = "current_thread")]
async fn distribute_off_keeps_the_target_local_and_the_dry_run_shows_the_call() {
    let _cluster = one_test_at_a_time().await;
    let Some(mut db) = coordinator().await else {
        return;
    };
    let fx = fixture(db.as_mut(), "off").await;
    let job = citus_job(&fx, "replace", "");
    let job = job.to_str().expect("path");
    let (url, _) = url();
    let dry = run(&["run", job, "--dry-run"], &url);
    let script = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{}", stderr(&dry));
    let call = format!(
        "SELECT create_distributed_table('{}', 'entity_id', colocate_with => '{}')",
        fx.target, fx.source
    );
    assert!(script.contains(&call), "dry run shows {call}: {script}");
    assert_eq!(
        colocation(db.as_mut(), &fx.target).await,
        None,
        "dry run wrote nothing"
    );
    // The standalone script distributes too, when it finds the source distributed.
    let script = std::process::Command::new(env!("CARGO_BIN_EXE_eavpivot"))
        .args(["script", job, "--dialect", "postgres"])
        .output()
        .expect("run eavpivot script");
    assert!(script.status.success(), "{}", stderr(&script));
    let script = String::from_utf8_lossy(&script.stdout).into_owned();
    let quoted = call.replace('\'', "''");
    assert!(script.contains(&quoted), "script shows {call}: {script}");
    db.execute_script(&script)
        .await
        .expect("the script runs on Citus");
    assert_eq!(
        colocation(db.as_mut(), &fx.target).await,
        colocation(db.as_mut(), &fx.source).await,
        "the script's table is distributed and co-located"
    );
    assert_eq!(
        read_table(db.as_mut(), "postgres", &fx.target).await.len(),
        ENTITIES as usize
    );
    drop_if_exists(db.as_mut(), &fx.target).await;
    let off = citus_job(&fx, "replace", "");
    let text = std::fs::read_to_string(&off).expect("job");
    std::fs::write(
        &off,
        text.replace(
            "if_exists: replace}",
            "if_exists: replace, distribute: off}",
        ),
    )
    .expect("job");
    let err = run_ok(&["run", off.to_str().expect("path")], "distribute: off");
    assert!(err.contains("target.distribute: off"), "{err}");
    assert_eq!(
        colocation(db.as_mut(), &fx.target).await,
        None,
        "a local table"
    );
    assert_eq!(
        read_table(db.as_mut(), "postgres", &fx.target).await.len(),
        ENTITIES as usize
    );
    fx.drop_tables(db.as_mut()).await;
}

/// `replace` of a distributed target from a local source: the new table is distributed by
/// the same column, co-located with the table it replaces, and the plan says so (before,
/// the replace silently turned the distributed target into a local table).
#[tokio::test(flavor = "current_thread")]
async fn replace_keeps_a_distributed_target_distributed_when_the_source_is_local() {
    let _cluster = one_test_at_a_time().await;
    let Some(mut db) = coordinator().await else {
        return;
    };
    let mut workers = workers(db.as_mut()).await;
    for strategy in ["pushdown", "stream"] {
        let fx = fixture(db.as_mut(), &format!("local{}", &strategy[..2])).await;
        let job = citus_job(&fx, "replace", "");
        let job = job.to_str().expect("path");
        run_ok(&["run", job], "replace from the distributed source");
        let group = colocation(db.as_mut(), &fx.target).await;
        assert!(group.is_some(), "the first replace distributes the target");
        db.execute(&format!("SELECT undistribute_table('{}')", fx.source))
            .await
            .expect("make the source a local table");
        assert_eq!(colocation(db.as_mut(), &fx.source).await, None, "local");
        for round in 1..=2 {
            let what = format!("{strategy}: replace {round} from a local source");
            let err = run_ok(&["run", job, "--strategy", strategy], &what);
            assert!(
                err.contains(&format!(
                    "target kept distributed by entity_id, co-located with the existing {}",
                    fx.target
                )),
                "{what}: the plan says it keeps the target distributed: {err}"
            );
            assert_eq!(
                colocation(db.as_mut(), &fx.target).await,
                group,
                "{what}: distributed, in the old target's colocation group"
            );
            let column = names(
                db.as_mut(),
                &format!(
                    "SELECT column_to_column_name(logicalrelid, partkey) FROM pg_dist_partition WHERE logicalrelid = to_regclass('{}')",
                    fx.target
                ),
            )
            .await;
            assert_eq!(column, ["entity_id"], "{what}: by the same column");
            let table = read_table(db.as_mut(), "postgres", &fx.target).await;
            assert_eq!(table.len(), ENTITIES as usize, "{what}: rows");
            assert_eq!(
                table.get(&3).and_then(|c| c.get("a2")).map(String::as_str),
                Some(expected_cell(3, 2).as_str()),
                "{what}: a cell"
            );
        }
        let left = leftovers(db.as_mut(), &mut workers, &fx.prefix).await;
        assert!(left.is_empty(), "{strategy}: left behind: {left:?}");
        fx.drop_tables(db.as_mut()).await;
    }
}

/// The one source value the merge tests change: attribute a2 of entity 3.
async fn change_a2_of_entity_3(db: &mut dyn Backend, fx: &Fixture, value: &str) {
    db.execute(&format!(
        "UPDATE {} SET val = '{value}' WHERE entity_id = 3 AND attr = 'a2'",
        fx.source
    ))
    .await
    .expect("change one value");
}

/// A merge into a distributed target that the source is not co-located with (its
/// own colocation group, or a local source): the run's tables go with the target, so the
/// statements that join staging and target run (Citus refuses a join of a local and a
/// distributed table — seen in CI, when the differential harness re-created a source in
/// another colocation group than its target's), and the values land.
#[tokio::test(flavor = "current_thread")]
async fn a_merge_into_a_target_not_co_located_with_the_source_goes_with_the_target() {
    let _cluster = one_test_at_a_time().await;
    let Some(mut db) = coordinator().await else {
        return;
    };
    let mut workers = workers(db.as_mut()).await;
    for strategy in ["pushdown", "stream"] {
        let fx = fixture(db.as_mut(), &format!("apart{}", &strategy[..2])).await;
        let job = citus_job(&fx, "merge", "");
        let job = job.to_str().expect("path");
        run_ok(&["run", job], "the first merge creates the target");
        db.execute_script(&format!(
            "SELECT undistribute_table('{t}'); SELECT create_distributed_table('{t}', 'entity_id', colocate_with => 'none');",
            t = fx.target
        ))
        .await
        .expect("move the target to a colocation group of its own");
        let group = colocation(db.as_mut(), &fx.target).await;
        assert!(group.is_some() && group != colocation(db.as_mut(), &fx.source).await);
        for (round, local) in [(1, false), (2, true)] {
            if local {
                db.execute(&format!("SELECT undistribute_table('{}')", fx.source))
                    .await
                    .expect("make the source a local table");
            }
            change_a2_of_entity_3(db.as_mut(), &fx, &format!("new{round}")).await;
            let what = format!("{strategy}: merge {round} (local source: {local})");
            let err = run_ok(&["run", job, "--strategy", strategy], &what);
            assert!(
                err.contains(&format!("co-located with the existing {}", fx.target)),
                "{what}: the plan says where the run's tables go: {err}"
            );
            assert_eq!(colocation(db.as_mut(), &fx.target).await, group, "{what}");
            let table = read_table(db.as_mut(), "postgres", &fx.target).await;
            assert_eq!(table.len(), ENTITIES as usize, "{what}: rows");
            assert_eq!(
                table.get(&3).and_then(|c| c.get("a2")).map(String::as_str),
                Some(format!("new{round}").as_str()),
                "{what}: the changed cell"
            );
        }
        // `distribute: off` is about the tables a run makes: a merge into a distributed
        // target still joins with it, so its tables go with the target (this failed at the
        // join before, rolled back).
        let off = citus_job(&fx, "merge", "");
        let text = std::fs::read_to_string(&off).expect("job");
        let off_text = text.replace("if_exists: merge}", "if_exists: merge, distribute: off}");
        assert_ne!(off_text, text, "the job names its if_exists as expected");
        std::fs::write(&off, off_text).expect("job");
        let off = off.to_str().expect("path");
        change_a2_of_entity_3(db.as_mut(), &fx, "new3").await;
        let what = format!("{strategy}: merge with distribute: off");
        let err = run_ok(&["run", off, "--strategy", strategy], &what);
        assert!(err.contains("target.distribute: off, but"), "{what}: {err}");
        assert_eq!(colocation(db.as_mut(), &fx.target).await, group, "{what}");
        let table = read_table(db.as_mut(), "postgres", &fx.target).await;
        assert_eq!(
            table.get(&3).and_then(|c| c.get("a2")).map(String::as_str),
            Some("new3"),
            "{what}: the changed cell"
        );
        // A target distributed by a column no entity is (Citus then refuses a primary key on
        // the entity) cannot be joined by entity: refused before anything is written, saying
        // what to do.
        db.execute_script(&format!(
            "SELECT undistribute_table('{t}'); \
             DO $$ DECLARE c text; BEGIN \
               SELECT conname INTO c FROM pg_constraint WHERE conrelid = '{t}'::regclass AND contype = 'p'; \
               EXECUTE format('ALTER TABLE {t} DROP CONSTRAINT %I', c); END $$; \
             SELECT create_distributed_table('{t}', 'a2');",
            t = fx.target
        ))
        .await
        .expect("distribute the target by an attribute column");
        change_a2_of_entity_3(db.as_mut(), &fx, "new4").await;
        for job in [job, off] {
            let (url, _) = url();
            let out = run(&["run", job, "--strategy", strategy], &url);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{strategy}: {err}");
            assert!(
                err.contains(&format!(
                    "cannot merge into {}: it is distributed by a2",
                    fx.target
                )),
                "{strategy}: {err}"
            );
            assert_eq!(
                read_table(db.as_mut(), "postgres", &fx.target).await,
                table,
                "{strategy}: the refused merge changed the target"
            );
        }
        let left = leftovers(db.as_mut(), &mut workers, &fx.prefix).await;
        assert!(left.is_empty(), "{strategy}: left behind: {left:?}");
        fx.drop_tables(db.as_mut()).await;
    }
}

/// kill -9 at every fault point of a replace and a merge: the old target stays (or the new
/// one is committed), no staging table on the coordinator and no staging shard on any worker
/// survives, and the next run succeeds.
#[tokio::test(flavor = "current_thread")]
async fn kill_9_at_every_point_leaves_no_staging_shards_on_any_worker() {
    let _cluster = one_test_at_a_time().await;
    let Some(mut db) = coordinator().await else {
        return;
    };
    let mut workers = workers(db.as_mut()).await;
    let (url, _) = url();
    let fx = fixture(db.as_mut(), "kill").await;
    for if_exists in ["replace", "merge"] {
        for strategy in ["pushdown", "stream"] {
            let job = citus_job(&fx, if_exists, "");
            let args = ["run", job.to_str().expect("path"), "--strategy", strategy];
            run_ok(&args, "first run");
            db.execute(&format!("DELETE FROM {} WHERE entity_id = 1", fx.target))
                .await
                .expect("mark the old target");
            let old = fingerprint(db.as_mut(), &fx.target).await;
            let mid_stream = ["stream:50"];
            let inside: &[&str] = if strategy == "stream" {
                &mid_stream
            } else {
                &[]
            };
            for point in ["created", "loaded", "commit", "committed"]
                .iter()
                .chain(inside)
            {
                let what = format!("{if_exists} {strategy} killed at {point}");
                kill_9(start_paused(&args, &url, point));
                let left = settled_leftovers(db.as_mut(), &mut workers, &fx.prefix).await;
                assert!(left.is_empty(), "{what}: left behind: {left:?}");
                let now = fingerprint(db.as_mut(), &fx.target).await;
                if *point == "committed" {
                    assert_eq!(now.0, ENTITIES as usize, "{what}: the new target");
                    db.execute(&format!("DELETE FROM {} WHERE entity_id = 1", fx.target))
                        .await
                        .expect("mark the old target again");
                } else {
                    assert_eq!(now, old, "{what}: the old target intact");
                }
                assert_eq!(
                    colocation(db.as_mut(), &fx.target).await,
                    colocation(db.as_mut(), &fx.source).await,
                    "{what}: still distributed"
                );
            }
            run_ok(&args, "re-run");
        }
    }
    fx.drop_tables(db.as_mut()).await;
}

/// A row lock held on a worker (another transaction updating one of the target's rows
/// there) stops a merge within its lock timeout, not 30 s later; the error says lock.
#[tokio::test(flavor = "current_thread")]
async fn a_lock_held_on_a_worker_stops_the_run_within_its_lock_timeout() {
    let _cluster = one_test_at_a_time().await;
    let Some(mut db) = coordinator().await else {
        return;
    };
    let fx = fixture(db.as_mut(), "lock").await;
    let job = citus_job(&fx, "merge", "");
    let job = job.to_str().expect("path");
    run_ok(&["run", job, "--strategy", "pushdown"], "first run");
    let (url, _) = url();
    let mut holder = connect(&url).await.expect("a second connection");
    holder.execute("BEGIN").await.expect("begin");
    holder
        .execute(&format!(
            "UPDATE {} SET a2 = 'held' WHERE entity_id = 1",
            fx.target
        ))
        .await
        .expect("lock one row on its worker");
    let started = Instant::now();
    let out = run(
        &["run", job, "--strategy", "pushdown", "--lock-timeout", "1"],
        &url,
    );
    let took = started.elapsed();
    holder.execute("ROLLBACK").await.expect("rollback");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("lock"), "the error says lock: {err}");
    assert!(
        took < Duration::from_secs(8),
        "stopped within the 1 s limit (plus start-up), took {took:?}: {err}"
    );
    fx.drop_tables(db.as_mut()).await;
}

/// Ctrl-C while a distributed statement runs on the workers: the run exits promptly and no
/// task of it is left running on any node (Citus cancels the workers' tasks with the
/// coordinator's statement, which the protocol's cancel request stops).
#[tokio::test(flavor = "current_thread")]
async fn ctrl_c_stops_the_distributed_statement_on_every_worker() {
    let _cluster = one_test_at_a_time().await;
    let Some(mut db) = coordinator().await else {
        return;
    };
    let (url, _) = url();
    let fx = fixture(db.as_mut(), "cancel").await;
    // 200 ms per row in every statement reading the source: the first (discovery) is a
    // distributed query too, its tasks running on the workers.
    let value = "s.val || pg_sleep(0.2)::text";
    let yaml = job_yaml(
        "citus",
        &fx.source,
        &fx.target,
        "strategy: pushdown\n",
        ", if_exists: replace",
    );
    let job = fx.job_file(
        "cancel.yaml",
        &yaml.replace("value: s.val", &format!("value: \"{value}\"")),
    );
    let running = format!(
        "SELECT count(*) FROM citus_stat_activity WHERE query LIKE '%pg_sleep%' AND query LIKE '%{}%' \
         AND query NOT LIKE '%citus_stat_activity%' AND nodeid <> (SELECT nodeid FROM pg_dist_node WHERE groupid = 0)",
        fx.prefix
    );
    let child = db_children::start(&job, &url, &[]);
    let seen = db_children::wait_until(db.as_mut(), &running, Duration::from_secs(30)).await;
    assert!(seen, "the statement never ran on the workers");
    db_children::signal(&child, "INT");
    let (status, err, took) = db_children::finish(child, Duration::from_secs(20)).await;
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        took < Duration::from_secs(3),
        "exited {took:?} after Ctrl-C: {err}"
    );
    assert!(err.contains("cancelled on the server"), "{err}");
    let started = Instant::now();
    while db_children::count(db.as_mut(), &running).await > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the statement still runs on a worker after Ctrl-C"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        colocation(db.as_mut(), &fx.target).await,
        None,
        "no target left"
    );
    fx.drop_tables(db.as_mut()).await;
}

/// A `citext` source on Citus: `Color` and `color` stay two columns and `Red`/`red` keep the
/// byte order's value, on both strategies, replace then merge. Discovery groups names by an
/// exact key; before 3ef6bdb that key was a relabelling `CAST` that Citus could not group by
/// ("attribute 1 of type record has wrong type"), so any Citus source with `citext` failed.
#[tokio::test(flavor = "current_thread")]
async fn a_citext_source_keeps_two_spellings_apart_on_citus() {
    let _cluster = one_test_at_a_time().await;
    let Some(mut db) = coordinator().await else {
        return;
    };
    db.execute("CREATE EXTENSION IF NOT EXISTS citext")
        .await
        .expect("citext on the coordinator and its workers");
    for strategy in ["pushdown", "stream"] {
        let fx = Fixture::empty(
            db.as_mut(),
            format!("citus{}_ci{}", std::process::id(), &strategy[..2]),
        )
        .await;
        let source = &fx.source;
        execute_all(
            db.as_mut(),
            &[
            format!("CREATE TABLE {source} (entity_id INT, attr CITEXT, val CITEXT)"),
            format!("SELECT create_distributed_table('{source}', 'entity_id')"),
            format!(
                "INSERT INTO {source} VALUES (1, 'Color', 'Red'), (1, 'color', 'blue'), (1, 'Size', 'M'), (1, 'Size', 'm'), \
                 (2, 'Color', 'Green'), (3, 'color', 'red')"
            ),
            ],
        )
        .await;
        for if_exists in ["replace", "merge"] {
            let job = citus_job(&fx, if_exists, "");
            let what = format!("citext {strategy} {if_exists}");
            run_ok(
                &["run", job.to_str().expect("path"), "--strategy", strategy],
                &what,
            );
            let table = read_table(db.as_mut(), "postgres", &fx.target).await;
            let cells = |e: i64| {
                let row = table.get(&e).cloned().unwrap_or_default();
                let mut row: Vec<(String, String)> = row.into_iter().collect();
                row.sort();
                row
            };
            let pair = |c: &str, v: &str| (c.to_string(), v.to_string());
            assert_eq!(table.len(), 3, "{what}: rows {table:?}");
            assert_eq!(
                cells(1),
                [
                    pair("Color", "Red"),
                    pair("Size", "m"),
                    pair("color", "blue")
                ],
                "{what}: entity 1"
            );
            assert_eq!(cells(2), [pair("Color", "Green")], "{what}: entity 2");
            assert_eq!(cells(3), [pair("color", "red")], "{what}: entity 3");
            let source_group = colocation(db.as_mut(), &fx.source).await;
            assert_eq!(
                colocation(db.as_mut(), &fx.target).await,
                source_group,
                "{what}: the target is co-located with the source"
            );
        }
        fx.drop_tables(db.as_mut()).await;
    }
}
