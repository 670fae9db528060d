//! One case on one database (or pair): every step run for real and compared with the model
//! cell by cell, with the exit code, the report's counts, the source checksum and, for
//! refusals, the untouched target checked. Also the shrinker and the printed reproduction.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::exec::{self, Db, Names};
use super::gen::Case;
use super::model::{self, Outcome, Target};
use super::numbers;
use super::script;
use super::servers;

/// A discrepancy between the model and the product.
#[derive(Debug, Clone)]
pub struct Finding {
    pub step: usize,
    pub what: String,
}

impl Finding {
    /// What kind of discrepancy this is, without names and numbers: a shrink step must
    /// keep the kind, not just fail somehow.
    pub fn kind(&self) -> String {
        let head: String = self
            .what
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .take(40)
            .collect();
        head.split(" (").next().unwrap_or("").to_string()
    }
}

#[derive(Default, Debug)]
pub struct Stats {
    pub runs: usize,
    pub written: usize,
    pub refused: usize,
    /// Typed merges the product refused where the model allowed it.
    pub either_refused: usize,
    /// Steps whose standalone script also ran and matched the model (script.rs).
    pub scripts: usize,
}

/// The legs' names, by index into `dbs`.
pub fn legs(dbs: &[Db]) -> Vec<&'static str> {
    dbs.iter().map(|d| d.what).collect()
}

/// (source, target) database indices a case runs on: each of the `legs` alone, its pair,
/// and with SQL Server its pair's source into SQL Server.
pub fn configs(case: &Case, legs: &[&str]) -> Vec<(usize, usize)> {
    let mut c: Vec<(usize, usize)> = (0..legs.len()).map(|i| (i, i)).collect();
    c.extend(case.cross);
    let mssql = legs.iter().position(|w| *w == "mssql");
    if let (Some((s, _)), Some(m)) = (case.cross, mssql) {
        c.push((s, m));
    }
    c
}

pub fn config_name(legs: &[&str], (s, t): (usize, usize)) -> String {
    match s == t {
        true => legs[s].to_string(),
        false => format!("{} -> {}", legs[s], legs[t]),
    }
}

struct Side<'a> {
    rt: &'a tokio::runtime::Runtime,
    dbs: &'a mut [Db],
}

impl Side<'_> {
    fn exec(&mut self, i: usize, sql: &str) -> Result<(), String> {
        let db = &mut self.dbs[i];
        self.rt
            .block_on(db.conn.execute(sql))
            .map(|_| ())
            .map_err(|e| format!("{} setup `{sql}`: {e}", db.what))
    }
    fn drop(&mut self, i: usize, table: &str) {
        self.rt
            .block_on(servers::drop_if_exists(self.dbs[i].conn.as_mut(), table));
    }
    fn fingerprint(&mut self, i: usize, table: &str) -> Option<Result<(usize, u64), String>> {
        self.rt
            .block_on(exec::checksum(self.dbs[i].conn.as_mut(), table))
    }
}

fn target_tables(names: &Names) -> Vec<String> {
    let mut t = vec![names.target.clone()];
    t.extend((2..=8).map(|i| format!("{}_{i}", names.target)));
    t.push(script::table(names));
    t
}

fn cleanup(side: &mut Side, names: &Names, (s, t): (usize, usize)) {
    side.drop(s, &names.source);
    side.drop(s, &names.attrs);
    for table in target_tables(names) {
        side.drop(t, &table);
    }
}

/// Runs every step of `case` on `(s, t)`; the first discrepancy ends it.
pub fn run_config(
    rt: &tokio::runtime::Runtime,
    dbs: &mut [Db],
    dir: &Path,
    case: &Case,
    (s, t): (usize, usize),
    tag: &str,
) -> Result<Stats, Finding> {
    // One Citus case at a time in this binary: two tests creating tables side by side can
    // each make a default colocation group for the same key type, and a source re-created
    // between two steps then joins the lower one, not its target's (seen once, in a CI run).
    static CITUS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = (dbs[s].what == "citus" || dbs[t].what == "citus").then(|| {
        CITUS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    });
    let names = Names::new(tag, case.uses.contains("idcase"));
    let mut side = Side { rt, dbs };
    cleanup(&mut side, &names, (s, t));
    let result = steps(&mut side, dir, case, (s, t), &names);
    cleanup(&mut side, &names, (s, t));
    result
}

fn steps(
    side: &mut Side,
    dir: &Path,
    case: &Case,
    (s, t): (usize, usize),
    names: &Names,
) -> Result<Stats, Finding> {
    let mut stats = Stats::default();
    let mut prev: Option<Target> = None;
    let mut tables: Vec<String> = Vec::new();
    let mut map = BTreeMap::new();
    let mut as_written = BTreeSet::new();
    let (source_url, target_url) = (side.dbs[s].url.clone(), side.dbs[t].url.clone());
    let cross = s != t;
    let (source_leg, target_leg) = (side.dbs[s].what, side.dbs[t].what);
    for (i, step) in case.steps.iter().enumerate() {
        let fail = |what: String| Finding { step: i, what };
        side.drop(s, &names.source);
        side.drop(s, &names.attrs);
        for sql in exec::source_sql(case, step, names, source_leg) {
            side.exec(s, &sql).map_err(fail)?;
        }
        let source_before = (
            side.fingerprint(s, &names.source),
            side.fingerprint(s, &names.attrs),
        );
        let known: Vec<String> = target_tables(names);
        let target_before: Vec<_> = known.iter().map(|x| side.fingerprint(t, x)).collect();
        let job = dir.join(format!("{}_{i}.yaml", names.target));
        std::fs::write(&job, exec::job_yaml(case, step, names)).expect("write job");
        let args = exec::args(
            step,
            &job.display().to_string(),
            &source_url,
            cross.then_some(target_url.as_str()),
        );
        let run = model::Run::new(source_leg, target_leg, case.values);
        let expected = model::expect(&case.job, step, prev.as_ref(), run);
        let ran = exec::run(&args);
        stats.runs += 1;
        let said = ran.stderr.trim().lines().last().unwrap_or("").to_string();
        if ran.stderr.contains("panicked at") {
            return Err(fail(format!("the binary panicked: {}", ran.stderr.trim())));
        }
        let source_after = (
            side.fingerprint(s, &names.source),
            side.fingerprint(s, &names.attrs),
        );
        if source_before != source_after {
            return Err(fail(format!(
                "the source changed (exit {:?}: {said})",
                ran.code
            )));
        }
        let unchanged = |side: &mut Side| -> Result<(), Finding> {
            let after: Vec<_> = known.iter().map(|x| side.fingerprint(t, x)).collect();
            match after == target_before {
                true => Ok(()),
                false => Err(fail(format!(
                    "refused (exit {:?}: {said}) but the target changed",
                    ran.code
                ))),
            }
        };
        let (target, conflicts, nulled) = match expected {
            Outcome::Refused(why) => {
                if ran.code == Some(0) {
                    return Err(fail(format!("expected a refusal ({why}), got exit 0")));
                }
                if ran.code.is_none() {
                    return Err(fail(format!(
                        "expected a refusal ({why}); the run hung or was killed"
                    )));
                }
                unchanged(side)?;
                stats.refused += 1;
                continue;
            }
            Outcome::WrittenOrRefused(_) if ran.code != Some(0) => {
                unchanged(side)?;
                stats.either_refused += 1;
                continue;
            }
            Outcome::WrittenOrRefused(target) => (target, None, None),
            Outcome::Written {
                target,
                conflicts,
                nulled,
            } => (target, conflicts, nulled),
        };
        if ran.code != Some(0) {
            return Err(fail(format!(
                "expected success, got exit {:?}: {said}",
                ran.code
            )));
        }
        let report = &ran.report;
        if let Some(list) = report["tables"].as_array() {
            tables = list
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect();
        }
        map.extend(exec::column_map(report));
        let text_now = text_columns(report, target_leg);
        as_written = match (&prev, step.merge) {
            // A merge keeps what an existing column held; a column it adds is new.
            (Some(p), true) => text_now
                .into_iter()
                .filter(|a| as_written.contains(a) || !p.columns.contains(a))
                .collect(),
            _ => text_now,
        };
        let mut actual = side
            .rt
            .block_on(exec::read_target(
                side.dbs[t].conn.as_mut(),
                target_leg,
                case,
                &tables,
                &map,
            ))
            .map_err(|e| fail(format!("reading the target back: {e}")))?;
        actual.as_written.clone_from(&as_written);
        compare(case, &target, &actual).map_err(fail)?;
        if !cross && script::applies(case, step, target_leg, &exec::column_map(report)) {
            let step_map = exec::column_map(report);
            script::check(
                side.rt,
                &mut side.dbs[t],
                dir,
                case,
                step,
                names,
                &step_map,
                &target,
            )
            .map_err(fail)?;
            if target_leg == "citus" {
                side.rt
                    .block_on(distributed_like_the_source(
                        side.dbs[t].conn.as_mut(),
                        &script::table(names),
                        &names.source,
                    ))
                    .map_err(|e| fail(format!("the script's table: {e}")))?;
            }
            stats.scripts += 1;
        }
        if target_leg == "citus" {
            for table in &tables {
                side.rt
                    .block_on(distributed_like_the_source(
                        side.dbs[t].conn.as_mut(),
                        table,
                        &names.source,
                    ))
                    .map_err(fail)?;
            }
        }
        if let Some(n) = conflicts {
            let got = report["conflicts"].as_u64();
            if got != Some(n) {
                return Err(fail(format!("--json conflicts: expected {n}, got {got:?}")));
            }
        }
        // A split target's cells are merged table by table: one `merged[]` entry each.
        if let (Some(n), true) = (nulled, case.uses.contains("nulled")) {
            let entries = report["merged"].as_array().map_or(&[][..], Vec::as_slice);
            let got: Option<u64> = entries.iter().map(|m| m["nulled"].as_u64()).sum();
            if got != Some(n) || entries.is_empty() {
                return Err(fail(format!(
                    "--json merged[].nulled (summed over {} tables): expected {n}, got {got:?}",
                    entries.len()
                )));
            }
        }
        stats.written += 1;
        prev = Some(target);
    }
    Ok(stats)
}

/// On Citus every table the run wrote is distributed and co-located with the source (the
/// source is distributed by an entity column, so `target.distribute: auto` distributes).
async fn distributed_like_the_source(
    db: &mut dyn eavpivot::backend::Backend,
    table: &str,
    source: &str,
) -> Result<(), String> {
    let sql = format!(
        "SELECT count(*)::text FROM pg_dist_partition t JOIN pg_dist_partition s ON s.colocationid = t.colocationid AND s.partkey = t.partkey WHERE t.logicalrelid = {}::regclass AND s.logicalrelid = {}::regclass",
        exec::literal("postgres", &exec::quote("postgres", &table.to_lowercase())),
        exec::literal("postgres", source),
    );
    let rows = db.query(&sql).await.map_err(|e| format!("{sql}: {e}"))?;
    match rows
        .first()
        .and_then(|r| r.first())
        .and_then(|v| v.as_text())
    {
        Some(n) if n == "1" => Ok(()),
        _ => {
            // What each table is, for the reproduction: column and colocation group.
            let seen = format!(
                "SELECT logicalrelid::text || ': ' || column_to_column_name(logicalrelid, partkey) || ', group ' || colocationid FROM pg_dist_partition WHERE logicalrelid IN ({}::regclass, {}::regclass)",
                exec::literal("postgres", &exec::quote("postgres", &table.to_lowercase())),
                exec::literal("postgres", source),
            );
            let seen: Vec<String> = match db.query(&seen).await {
                Ok(rows) => rows
                    .iter()
                    .filter_map(|r| r.first().and_then(|v| v.as_text()))
                    .collect(),
                Err(e) => vec![format!("({e})")],
            };
            Err(format!(
                "{table} is not distributed and co-located with the source {source} on Citus ({})",
                seen.join("; ")
            ))
        }
    }
}

/// The attributes whose column the run's report types as text (`columns[].type`, after the run).
fn text_columns(report: &serde_json::Value, leg: &str) -> BTreeSet<String> {
    let Some(dialect) = eavpivot::dialect::by_name(exec::sql_of(leg)) else {
        return BTreeSet::new();
    };
    report["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| {
            c["type"]
                .as_str()
                .and_then(|t| dialect.portable_type(t))
                .is_some_and(|k| k.is_text())
        })
        .filter_map(|c| c["attribute"].as_str().map(String::from))
        .collect()
}

pub fn compare(case: &Case, expected: &Target, actual: &exec::Actual) -> Result<(), String> {
    let mut diffs = Vec::new();
    for c in expected.columns.difference(&actual.columns) {
        diffs.push(format!("column for attribute {c:?} missing"));
    }
    for c in actual.columns.difference(&expected.columns) {
        diffs.push(format!("unexpected column for attribute {c:?}"));
    }
    for key in expected
        .rows
        .keys()
        .filter(|k| !actual.rows.contains_key(*k))
    {
        diffs.push(format!("row {} missing", show_key(key)));
    }
    for key in actual
        .rows
        .keys()
        .filter(|k| !expected.rows.contains_key(*k))
    {
        diffs.push(format!("unexpected row {}", show_key(key)));
    }
    for (key, want) in &expected.rows {
        let Some(got) = actual.rows.get(key) else {
            continue;
        };
        for attr in expected
            .columns
            .iter()
            .filter(|c| actual.columns.contains(*c))
        {
            let typed = (case.job.infer || case.job.types.contains_key(attr))
                && !actual.as_written.contains(attr);
            match (want.get(attr), got.get(attr)) {
                (None, None) => {}
                (Some(w), Some(g)) if model::same(w, g, typed) => {}
                // A SQLite source's REAL values make a double column where typed.
                (Some(w), Some(model::Cell::Real(x)))
                    if case.values != numbers::Column::Text && typed =>
                {
                    if numbers::number(w) != *x {
                        diffs.push(format!(
                            "{} {attr:?}: expected {w:?}, got {x} (double)",
                            show_key(key)
                        ));
                    }
                }
                (w, g) => diffs.push(format!(
                    "{} {attr:?}: expected {}, got {}",
                    show_key(key),
                    w.map_or("NULL".into(), |w| format!("{w:?}")),
                    g.map_or("NULL".into(), |g| g.to_string())
                )),
            }
        }
    }
    if diffs.is_empty() {
        return Ok(());
    }
    let n = diffs.len();
    diffs.truncate(12);
    Err(format!("{n} cell/row differences: {}", diffs.join("; ")))
}

fn show_key(key: &[model::K]) -> String {
    let parts: Vec<String> = key.iter().map(ToString::to_string).collect();
    format!("({})", parts.join(", "))
}
