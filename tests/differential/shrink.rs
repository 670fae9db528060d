//! A failing case made small: fewer merge steps, entities, attributes and rows, then
//! simpler settings and names, each kept only while the case still fails on the same
//! database; then printed as a ready reproduction (job, source SQL, commands, expected vs
//! actual).

use std::collections::BTreeSet;
use std::fmt::Write;

use super::check::{config_name, Finding};
use super::exec::{self, Names};
use super::gen::{Case, KeyCol};
use super::model::{self, Agg, OnNew, Row, K};

/// Candidates one edit smaller than `case`, most promising first.
fn smaller(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let with = |f: &dyn Fn(&mut Case)| {
        let mut c = case.clone();
        f(&mut c);
        c
    };
    for i in (1..case.steps.len()).rev() {
        out.push(with(&|c| {
            c.steps.remove(i);
        }));
    }
    let entities: BTreeSet<Vec<K>> = case
        .steps
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| r.key.clone()))
        .collect();
    for e in &entities {
        out.push(with(&|c| {
            c.steps
                .iter_mut()
                .for_each(|s| s.rows.retain(|r| &r.key != e))
        }));
    }
    let attrs: BTreeSet<Option<String>> = case
        .steps
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| r.attr.clone()))
        .collect();
    for a in &attrs {
        out.push(with(&|c| {
            c.steps
                .iter_mut()
                .for_each(|s| s.rows.retain(|r| &r.attr != a))
        }));
    }
    for (i, step) in case.steps.iter().enumerate() {
        for j in 0..step.rows.len() {
            out.push(with(&|c| {
                c.steps[i].rows.remove(j);
            }));
        }
    }
    let settings: [&dyn Fn(&mut Case); 10] = [
        &|c| c.join = false,
        &|c| c.job.split = None,
        &|c| c.job.types.clear(),
        &|c| c.job.aggregate = Agg::Max,
        &|c| c.job.on_new = OnNew::Add,
        &|c| c.job.on_missing_delete = false,
        &|c| c.steps.iter_mut().for_each(|s| s.where_g = None),
        &|c| c.steps.iter_mut().for_each(|s| s.changed = None),
        &|c| c.steps.iter_mut().for_each(|s| s.changed_by_key = false),
        &|c| {
            c.keys = vec![KeyCol {
                name: c.keys[0].name.clone(),
                text: false,
            }];
            let mut ids = std::collections::BTreeMap::new();
            for s in c.steps.iter_mut() {
                for r in s.rows.iter_mut() {
                    let n = ids.len() as i64 + 1;
                    r.key = vec![K::I(*ids.entry(r.key.clone()).or_insert(n))];
                }
            }
        },
    ];
    for f in settings {
        let c = with(f);
        if format!("{:?}", c.job) != format!("{:?}", case.job)
            || c.join != case.join
            || c.keys.len() != case.keys.len()
            || c.keys.iter().zip(&case.keys).any(|(a, b)| a.text != b.text)
            || c.steps.iter().zip(&case.steps).any(|(a, b)| {
                a.where_g != b.where_g
                    || a.changed != b.changed
                    || a.changed_by_key != b.changed_by_key
            })
        {
            out.push(c);
        }
    }
    // Simpler names and values, one at a time.
    for (n, a) in attrs.iter().flatten().enumerate() {
        let simple = format!("a{n}");
        if attrs.contains(&Some(simple.clone())) || a == &simple {
            continue;
        }
        out.push(with(&|c| {
            for s in c.steps.iter_mut() {
                s.rows
                    .iter_mut()
                    .filter(|r| r.attr.as_ref() == Some(a))
                    .for_each(|r| r.attr = Some(simple.clone()));
            }
            if let Some(t) = c.job.types.remove(a) {
                c.job.types.insert(simple.clone(), t);
            }
        }));
    }
    out
}

/// Shrinks while `fails` says the candidate still fails; at most `budget` tries.
pub fn shrink(
    case: &Case,
    budget: usize,
    fails: &mut dyn FnMut(&Case) -> Option<Finding>,
) -> (Case, Option<Finding>) {
    let mut best = case.clone();
    let mut finding = None;
    let mut tries = 0;
    'outer: loop {
        for candidate in smaller(&best) {
            if tries >= budget {
                break 'outer;
            }
            tries += 1;
            if let Some(f) = fails(&candidate) {
                best = candidate;
                finding = Some(f);
                continue 'outer;
            }
        }
        break;
    }
    (best, finding)
}

/// The reproduction: per step the source SQL, the job file, the command and what the model
/// expects.
pub fn reproduction(
    case: &Case,
    legs: &[&str],
    config: (usize, usize),
    finding: &Finding,
) -> String {
    let (s, t) = config;
    let names = Names::new("repro", case.uses.contains("idcase"));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "differential case seed {} on {}: step {} — {}",
        case.seed,
        config_name(legs, config),
        finding.step,
        finding.what
    );
    let _ = writeln!(out, "families: {:?}", case.uses);
    let mut prev = None;
    for (i, step) in case.steps.iter().enumerate().take(finding.step + 1) {
        let _ = writeln!(out, "--- step {i} ---");
        let _ = writeln!(
            out,
            "-- source on {} (drop {} and {} first):",
            legs[s], names.source, names.attrs
        );
        for sql in exec::source_sql(case, step, &names, legs[s]) {
            let _ = writeln!(out, "{sql};");
        }
        let _ = writeln!(out, "-- job.yaml:\n{}", exec::job_yaml(case, step, &names));
        let url = |i: usize| exec::example_url(legs[i]);
        let args = exec::args(step, "job.yaml", url(s), (s != t).then_some(url(t)));
        let _ = writeln!(
            out,
            "$ eavpivot {}",
            args.iter().map(|a| shell(a)).collect::<Vec<_>>().join(" ")
        );
        let run = model::Run::new(legs[s], legs[t], case.values);
        let outcome = model::expect(&case.job, step, prev.as_ref(), run);
        let _ = writeln!(out, "-- expected: {}", describe(&outcome));
        if let model::Outcome::Written { target, .. } | model::Outcome::WrittenOrRefused(target) =
            outcome
        {
            prev = Some(target);
        }
    }
    out
}

fn shell(a: &str) -> String {
    match a
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_=./:@".contains(c))
    {
        true => a.to_string(),
        false => format!("'{}'", a.replace('\'', "'\\''")),
    }
}

fn describe(o: &model::Outcome) -> String {
    let table = |t: &model::Target| {
        let rows: Vec<String> = t
            .rows
            .iter()
            .map(|(k, cells)| {
                let k: Vec<String> = k.iter().map(ToString::to_string).collect();
                let c: Vec<String> = t
                    .columns
                    .iter()
                    .map(|a| {
                        format!(
                            "{a:?}={}",
                            cells.get(a).map_or("NULL".into(), |v| format!("{v:?}"))
                        )
                    })
                    .collect();
                format!("  ({}) {}", k.join(", "), c.join(" "))
            })
            .collect();
        rows.join("\n")
    };
    match o {
        model::Outcome::Refused(why) => format!("refused, nothing written ({why})"),
        model::Outcome::Written {
            target, conflicts, ..
        } => {
            format!("exit 0, conflicts {conflicts:?}, table:\n{}", table(target))
        }
        model::Outcome::WrittenOrRefused(target) => {
            format!(
                "refused with the target untouched, or exit 0 with (by value):\n{}",
                table(target)
            )
        }
    }
}

#[allow(dead_code)] // used by the named regression cases
pub fn row(key: i64, attr: &str, val: &str, grp: i64, modified: i64) -> Row {
    Row {
        key: vec![K::I(key)],
        attr: Some(attr.into()),
        val: Some(val.into()),
        grp,
        modified,
    }
}
