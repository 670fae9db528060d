//! Named cases: the reproductions of issue 21 part 1 (defects 1–5 and 9; 6–8 are about the
//! print-back check's plan, the preview and `check`/`inspect`, outside what a table
//! comparison sees) in the harness's terms, and issue 17's same-database guard. Each runs
//! like a random case, on every database, and says which defect it stands for.

use std::collections::BTreeMap;

use super::check::{self, config_name};
use super::exec::{self, Names};
use super::gen::{Case, Features, KeyCol};
use super::model::{Agg, Job, OnNew, Row, Step};
use super::servers;
use super::shrink::{reproduction, row};

fn job(infer: bool, pushdown: bool) -> Job {
    Job {
        aggregate: Agg::Max,
        infer,
        types: BTreeMap::new(),
        on_missing_delete: false,
        on_new: OnNew::Add,
        split: None,
        pushdown,
    }
}

fn step(merge: bool, rows: Vec<Row>, where_g: Option<i64>, changed: Option<i64>) -> Step {
    Step {
        merge,
        rows,
        where_g,
        changed,
        changed_by_key: false,
    }
}

fn case(job: Job, steps: Vec<Step>, cross: Option<(usize, usize)>, uses: &[&'static str]) -> Case {
    Case {
        seed: 0,
        keys: vec![KeyCol {
            name: if uses.contains(&"idcase") {
                "ItemId"
            } else {
                "entity_id"
            }
            .into(),
            text: false,
        }],
        join: false,
        job,
        steps,
        cross,
        values: super::numbers::Column::Text,
        uses: uses.iter().copied().collect(),
    }
}

/// The README's delta data: two entities, one value of entity 1 changed at time 2.
fn delta_rows(changed: bool) -> Vec<Row> {
    let (color, stamp) = if changed { ("green", 2) } else { ("red", 1) };
    vec![
        row(1, "color", color, stamp, stamp),
        row(1, "size", "M", 1, 1),
        row(1, "price", "7.50", 1, 1),
        row(2, "color", "blue", 1, 1),
        row(2, "size", "L", 1, 1),
    ]
}

pub fn named() -> Vec<(&'static str, Case)> {
    let typed_rows = |e: i64, w: &str, d: &str, n: &str| {
        vec![
            row(e, "w", w, 0, 0),
            row(e, "d", d, 0, 0),
            row(e, "n", n, 0, 0),
        ]
    };
    let mut cases = vec![
        (
            "issue 21 defect 1: a merge whose `where` reads one changed value must not NULL the rest (refuse)",
            case(
                job(false, true),
                vec![
                    step(false, delta_rows(false), Some(1), None),
                    step(true, delta_rows(true), Some(2), None),
                ],
                None,
                &["where_rows"],
            ),
        ),
        (
            "issue 21 defect 1: `source.changed` re-pivots the changed entity from all its rows",
            case(
                job(false, false),
                vec![
                    step(false, delta_rows(false), None, None),
                    step(true, delta_rows(true), None, Some(2)),
                ],
                None,
                &["changed"],
            ),
        ),
        (
            "issue 21 defect 3: an integer counter inferred at 6771 takes 40000 on the next merge",
            case(
                job(true, true),
                vec![
                    step(false, vec![row(1, "counter", "6771", 0, 0)], None, None),
                    step(true, vec![row(1, "counter", "6771", 0, 0), row(2, "counter", "40000", 0, 0)], None, None),
                ],
                None,
                &["typed_merge"],
            ),
        ),
        (
            "issue 21 defect 4: pivot.types DECIMAL(12,4) keeps 149.9900 and 82.0 exactly (SQLite: not REAL)",
            {
                let mut j = job(false, true);
                j.types.insert("price".into(), "DECIMAL(12,4)".into());
                case(
                    j,
                    vec![step(false, vec![row(1, "price", "149.9900", 0, 0), row(2, "price", "82.0", 0, 0)], None, None)],
                    None,
                    &["types"],
                )
            },
        ),
        (
            "issue 21 defect 9: mixed-case key columns follow the unquoted-identifier rule",
            case(
                job(false, true),
                vec![step(false, vec![row(1, "a", "x", 0, 0), row(2, "b", "y", 0, 0)], None, None)],
                None,
                &["idcase"],
            ),
        ),
    ];
    for pushdown in [true, false] {
        cases.push((
            "issue 21 defect 2: a typed merge of 27.85, a timestamp and 5.5 into 27.8, a date and 5 never rounds",
            case(
                job(true, pushdown),
                vec![
                    step(false, typed_rows(1, "27.8", "2024-01-01", "5"), None, None),
                    step(true, typed_rows(2, "27.85", "2024-01-02 10:30:00", "5.5"), None, None),
                ],
                None,
                &["typed_merge"],
            ),
        ));
    }
    for (pushdown, others) in [(true, false), (false, true)] {
        // Seeds 13053 and 77194: the only entity the delta names has lost its attribute names.
        let mut next = vec![row(20, "", "+5", 2, 3)];
        let mut first = vec![row(20, "a1", "x", 0, 1)];
        if others {
            first.push(row(21, "a1", "y", 0, 1));
            next.push(row(21, "a1", "y", 0, 1));
        }
        cases.push((
            "a delta naming an entity whose rows all lack an attribute name sets its cells to NULL",
            case(
                job(false, pushdown),
                vec![
                    step(true, first, None, Some(9)),
                    step(true, next, None, Some(3)),
                ],
                None,
                &["changed"],
            ),
        ));
    }
    for pushdown in [true, false] {
        // Seed 1796466716: Babelfish's catalog returned '☃' as '?', so the merge took the
        // existing column for a new one and failed adding it again.
        cases.push((
            "a merge finds its existing non-Latin-1 column (SQL Server catalog names as NVARCHAR)",
            case(
                job(false, pushdown),
                vec![
                    step(false, vec![row(1, "naïve ☃", "a", 0, 0)], None, None),
                    step(
                        true,
                        vec![row(1, "naïve ☃", "b", 0, 0), row(2, "naïve ☃", "c", 0, 0)],
                        None,
                        None,
                    ),
                ],
                None,
                &[],
            ),
        ));
    }
    for pushdown in [true, false] {
        // Seed 1796474477: on MariaDB (and SQL Server) `a ` is planned `a~…`, whose stem `a`
        // the merge took for its own, so `a ` shared the existing column of `a`.
        cases.push((
            "a merge never puts an attribute renamed for a trailing space into the column of the name without it",
            case(
                job(false, pushdown),
                vec![
                    step(false, vec![row(1, "a", "12.5", 1, 0)], None, None),
                    step(true, vec![row(2, "a ", "5", 2, 2)], None, None),
                ],
                None,
                &[],
            ),
        ));
    }
    for pushdown in [true, false] {
        // Seed 1796475657: the `where` guard looked for an attribute it did not read under
        // its name, `a `, not under its column `a~…` (MariaDB, SQL Server), and let the merge
        // NULL a cell the source still held outside `where`.
        cases.push((
            "issue 21 defect 1 with a renamed column: the where guard finds `a ` in its column `a~…` (refuse)",
            case(
                job(false, pushdown),
                vec![
                    step(false, vec![row(1, "a ", "2024-02-29", 1, 0)], Some(0), None),
                    step(
                        true,
                        vec![row(1, "a ", "1999-12-31", 1, 2), row(1, "a1", "12.50", 2, 2)],
                        Some(2),
                        None,
                    ),
                ],
                None,
                &["where_rows"],
            ),
        ));
    }
    for pushdown in [true, false] {
        // Seed 1796538639 (postgres_ci leg): the `where` guard built its own source query,
        // without the run's exact attribute key, so under a case-insensitive collation
        // `color` outside `where` was `Color` inside it, and the merge NULLed `color`.
        cases.push((
            "issue 21 defect 1 under a case-insensitive collation: the where guard tells `color` from `Color` (refuse)",
            case(
                job(false, pushdown),
                vec![
                    step(false, vec![row(10, "color", "6771", 0, 1)], Some(0), None),
                    step(
                        true,
                        vec![
                            row(10, "color", "99", 0, 2),
                            row(10, "Color", "2024-01-01", 2, 2),
                        ],
                        Some(2),
                        None,
                    ),
                ],
                None,
                &["where_rows"],
            ),
        ));
    }
    for pushdown in [true, false] {
        // Session 25: a text column took the typed value printed back (`12.50`, `…05.50`).
        cases.push((
            "a typed merge into a text column writes the source's text (12.5, not 12.50)",
            case(
                job(true, pushdown),
                vec![
                    step(
                        false,
                        vec![row(1, "p", "about 12", 0, 0), row(1, "t", "soon", 0, 0)],
                        None,
                        None,
                    ),
                    step(
                        true,
                        vec![
                            row(1, "p", "12.5", 0, 0),
                            row(2, "p", "7.25", 0, 0),
                            row(1, "t", "2020-01-02 03:04:05.5", 0, 0),
                            row(2, "t", "2020-01-02 03:04:05.25", 0, 0),
                        ],
                        None,
                        None,
                    ),
                ],
                None,
                &["typed_merge"],
            ),
        ));
    }
    for cross in [(2, 0), (0, 1), (1, 2)] {
        cases.push((
            "issue 21 defect 5: --target-connection with column_type: infer",
            case(
                job(true, false),
                vec![step(
                    false,
                    typed_rows(1, "27.8", "2024-01-01", "5"),
                    None,
                    None,
                )],
                Some(cross),
                &["cross_infer"],
            ),
        ));
    }
    cases
}

pub fn run_all() {
    let rt = servers::runtime();
    let Some(mut dbs) = exec::open_all(&rt) else {
        return;
    };
    let features = Features::from_env();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut failures = Vec::new();
    let legs = check::legs(&dbs);
    for (n, (name, case)) in named().into_iter().enumerate() {
        if let Some(off) = case.uses.iter().find(|f| !features.on(f)) {
            eprintln!("skipped (family {off} switched off): {name}");
            continue;
        }
        for config in check::configs(&case, &legs) {
            let tag = format!(
                "{}r{n}x{}{}",
                std::process::id() % 100_000,
                config.0,
                config.1
            );
            if let Err(f) = check::run_config(&rt, &mut dbs, dir.path(), &case, config, &tag) {
                failures.push(format!(
                    "{name} — {}\n{}",
                    config_name(&legs, config),
                    reproduction(&case, &legs, config, &f)
                ));
            }
        }
    }
    match features.on("same_db_guard") {
        true => failures.extend(same_database_guard(&rt, &mut dbs, dir.path())),
        false => eprintln!("skipped (family same_db_guard switched off): issue 17 defect 1"),
    }
    assert!(
        failures.is_empty(),
        "{} named case(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Issue 17 defect 1: `--target-connection` naming the source's own database, with the
/// source table as the target, is refused (exit 2) and the source is unchanged.
fn same_database_guard(
    rt: &tokio::runtime::Runtime,
    dbs: &mut [exec::Db],
    dir: &std::path::Path,
) -> Vec<String> {
    let mut failures = Vec::new();
    let case = case(
        job(false, false),
        vec![step(false, delta_rows(false), None, None)],
        None,
        &[],
    );
    for (i, db) in dbs.iter_mut().enumerate() {
        let names = Names::new(&format!("{}g{i}", std::process::id() % 100_000), false);
        let c = db.conn.as_mut();
        rt.block_on(servers::drop_if_exists(c, &names.source));
        for sql in exec::source_sql(&case, &case.steps[0], &names, db.what) {
            rt.block_on(c.execute(&sql)).expect("create the source");
        }
        let before = rt.block_on(exec::checksum(c, &names.source));
        let job = dir.join(format!("guard{i}.yaml"));
        let yaml =
            exec::job_yaml(&case, &case.steps[0], &names).replace(&names.target, &names.source);
        std::fs::write(&job, yaml).expect("write job");
        let args = exec::args(
            &case.steps[0],
            &job.display().to_string(),
            &db.url,
            Some(&db.url),
        );
        let ran = exec::run(&args);
        let after = rt.block_on(exec::checksum(c, &names.source));
        if ran.code != Some(2) || before != after {
            failures.push(format!(
                "issue 17 defect 1 — {}: --target-connection = --connection with the source as the target: exit {:?}, source unchanged: {} ({})",
                db.what,
                ran.code,
                before == after,
                ran.stderr.trim()
            ));
        }
        rt.block_on(servers::drop_if_exists(c, &names.source));
    }
    failures
}
