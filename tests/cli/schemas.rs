//! The published JSON Schemas (`schemas/`) against what eavpivot really reads and writes:
//! every bundled job validates against `job.schema.json`, and an invalid one does not; real
//! `run --json` and `inspect --json` reports (success and failure, from real runs on the
//! embedded SQLite) validate against their report schemas; and the job schema names exactly
//! the keys the job-file parser accepts at every level, asked of the binary itself (an unknown
//! key is refused with the list of keys it expected), so a key added to `src/config/file.rs`
//! without the schema fails here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The three schemas, compiled by an independent validator (boon, draft 2020-12).
struct Schemas {
    compiled: boon::Schemas,
    job: boon::SchemaIndex,
    run_report: boon::SchemaIndex,
    inspect_report: boon::SchemaIndex,
}

impl Schemas {
    fn load() -> Schemas {
        let mut compiled = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        let mut compile = |name: &str| {
            let path = repo().join("schemas").join(name);
            compiler
                .compile(&path.to_string_lossy(), &mut compiled)
                .unwrap_or_else(|e| panic!("schemas/{name} does not compile: {e:#}"))
        };
        let job = compile("job.schema.json");
        let run_report = compile("run-report.schema.json");
        let inspect_report = compile("inspect-report.schema.json");
        Schemas {
            compiled,
            job,
            run_report,
            inspect_report,
        }
    }

    /// Ok, or the validator's full explanation.
    fn check(&self, index: boon::SchemaIndex, value: &Value) -> Result<(), String> {
        self.compiled
            .validate(value, index)
            .map_err(|e| format!("{e:#}"))
    }

    fn assert_valid(&self, index: boon::SchemaIndex, value: &Value, what: &str) {
        if let Err(why) = self.check(index, value) {
            panic!("{what} does not validate:\n{why}\n{value:#}");
        }
    }
}

/// A job file's YAML as the JSON value a YAML language server validates.
fn yaml_as_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn bundled_jobs() -> Vec<PathBuf> {
    let mut jobs: Vec<PathBuf> = std::fs::read_dir(repo().join("config"))
        .expect("config/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    jobs.sort();
    assert!(jobs.len() >= 4, "bundled jobs not found: {jobs:?}");
    jobs
}

#[test]
fn every_bundled_job_validates_and_names_the_schema() {
    let schemas = Schemas::load();
    for path in bundled_jobs() {
        schemas.assert_valid(
            schemas.job,
            &yaml_as_json(&path),
            &path.display().to_string(),
        );
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.lines()
                .any(|l| l.starts_with("# yaml-language-server: $schema=")
                    && l.ends_with("schemas/job.schema.json")),
            "{} lacks the `# yaml-language-server: $schema=…` line",
            path.display()
        );
    }
}

/// The README's annotated job (every key, with the defaults) from docs/reference.md.
#[test]
fn the_reference_job_with_every_key_validates() {
    let schemas = Schemas::load();
    let reference =
        std::fs::read_to_string(repo().join("docs/reference.md")).expect("docs/reference.md");
    let start = reference
        .find("```yaml\nname: item_detail")
        .expect("the annotated job in docs/reference.md");
    let body = &reference[start + "```yaml\n".len()..];
    let body = &body[..body.find("```").expect("end of the yaml block")];
    let job: Value = serde_yaml::from_str(body).expect("the annotated job parses");
    schemas.assert_valid(schemas.job, &job, "docs/reference.md's annotated job");
    for key in [
        "source",
        "pivot",
        "target",
        "transforms",
        "strategy",
        "lock_timeout",
    ] {
        assert!(job.get(key).is_some(), "the annotated job lacks {key}");
    }
}

fn minimal_job() -> Value {
    json!({
        "name": "schemas_probe",
        "source": { "table": "kv" },
        "entity": "id",
        "attribute": "a",
        "value": "v",
        "target": { "table": "kv_wide" }
    })
}

#[test]
fn invalid_jobs_fail_validation_as_they_fail_the_parser() {
    let schemas = Schemas::load();
    schemas.assert_valid(schemas.job, &minimal_job(), "the minimal job");
    let dir = tempfile::tempdir().expect("tmp");
    let cases: Vec<(&str, Value)> = vec![
        (
            "an unknown top-level key",
            with(minimal_job(), "/tabel", json!("x")),
        ),
        (
            "an unknown key in target",
            with(minimal_job(), "/target/tabel", json!("x")),
        ),
        (
            "a word not among if_exists'",
            with(minimal_job(), "/target/if_exists", json!("sometimes")),
        ),
        (
            "a string for lock_timeout",
            with(minimal_job(), "/lock_timeout", json!("soon")),
        ),
        (
            "a list for source",
            with(minimal_job(), "/source", json!(["kv"])),
        ),
        ("no target", without(minimal_job(), "target")),
        (
            "two transforms in one item",
            with(
                minimal_job(),
                "/transforms",
                json!([{"map": {"values": {}}, "sudoku_solve": {}}]),
            ),
        ),
        ("split 0", with(minimal_job(), "/target/split", json!(0))),
    ];
    for (what, job) in cases {
        assert!(
            schemas.check(schemas.job, &job).is_err(),
            "the schema accepts {what}: {job}"
        );
        // The parser refuses it too (exit 2): the schema is not stricter than eavpivot here.
        let file = dir.path().join("invalid.yaml");
        std::fs::write(&file, job.to_string()).expect("write");
        let out = eavpivot(dir.path(), &["check", &file.to_string_lossy()]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "eavpivot check accepts {what}: {job}"
        );
    }
}

fn with(mut job: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    let slot = job.pointer_mut(parent).expect("parent exists");
    slot.as_object_mut()
        .expect("an object")
        .insert(key.to_string(), value);
    job
}

fn without(mut job: Value, key: &str) -> Value {
    job.as_object_mut().expect("object").remove(key);
    job
}

fn eavpivot(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eavpivot"))
        .args(args)
        .current_dir(cwd)
        .env_remove("EAVPIVOT_CONNECTION")
        .env_remove("EAVPIVOT_TARGET_CONNECTION")
        .env_remove("EAVPIVOT_PASSWORD")
        .output()
        .expect("run eavpivot")
}

/// Every object of the job schema, by where it sits in a job and in the schema: the probe
/// puts an unknown key there and asks the parser which keys it expected.
const OBJECTS: &[(&str, &str)] = &[
    ("", ""),
    ("/source", "/$defs/source"),
    ("/source/joins/0", "/$defs/join"),
    ("/entity/0", "/$defs/entityKey/oneOf/1"),
    ("/pivot", "/$defs/pivot"),
    ("/pivot/infer", "/$defs/pivot/properties/infer"),
    ("/target", "/$defs/target"),
    ("/transforms/0", "/$defs/transform"),
    ("/transforms/0/map", "/$defs/transform/properties/map"),
    (
        "/transforms/1/sudoku_solve",
        "/$defs/transform/properties/sudoku_solve",
    ),
];

/// A job with every nested object present, so a probe can go anywhere.
fn full_job() -> Value {
    json!({
        "name": "schemas_probe",
        "source": { "table": "kv", "joins": [{ "table": "j", "on": "1 = 1" }] },
        "entity": [{ "expr": "id", "name": "id" }],
        "attribute": "a",
        "value": "v",
        "pivot": { "infer": {} },
        "target": { "table": "kv_wide" },
        "transforms": [{ "map": { "values": {} } }, { "sudoku_solve": {} }]
    })
}

/// The keys the parser lists after ``unknown key `zz_probe`, expected …``.
fn expected_keys(stderr: &str) -> BTreeSet<String> {
    let tail = stderr
        .split("unknown key `zz_probe`, expected ")
        .nth(1)
        .unwrap_or_else(|| panic!("no unknown-key error for the probe:\n{stderr}"));
    let tail = tail.lines().next().unwrap_or_default();
    tail.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_job_schema_names_exactly_the_keys_the_parser_accepts() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/job.schema.json")).expect("read"),
    )
    .expect("json");
    // Every closed object of the schema is probed (a new one must be added to OBJECTS).
    let closed = count_closed_objects(&schema);
    assert_eq!(closed, OBJECTS.len(), "schemas/job.schema.json has {closed} objects with additionalProperties: false; OBJECTS lists {}", OBJECTS.len());
    let dir = tempfile::tempdir().expect("tmp");
    for (at, in_schema) in OBJECTS {
        let mut job = full_job();
        job.pointer_mut(at)
            .unwrap_or_else(|| panic!("{at} not in the probe job"))
            .as_object_mut()
            .expect("an object")
            .insert("zz_probe".into(), json!(1));
        let file = dir.path().join("probe.yaml");
        std::fs::write(&file, job.to_string()).expect("write");
        let out = eavpivot(dir.path(), &["check", &file.to_string_lossy()]);
        assert_eq!(out.status.code(), Some(2), "the probe at {at} was accepted");
        let parser = expected_keys(&String::from_utf8_lossy(&out.stderr));
        let object = schema.pointer(in_schema).expect("schema object");
        let listed: BTreeSet<String> = object["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .cloned()
            .collect();
        assert_eq!(
            listed, parser,
            "job.schema.json{in_schema} (left) and the job-file parser at {at} (right) disagree"
        );
        assert_eq!(object["additionalProperties"], json!(false), "{in_schema}");
    }
}

fn count_closed_objects(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            let own = usize::from(map.get("additionalProperties") == Some(&json!(false)));
            own + map.values().map(count_closed_objects).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_closed_objects).sum(),
        _ => 0,
    }
}

/// `args` run in `cwd`; stdout parsed as the one JSON object, checked against the exit code.
fn json_of(cwd: &Path, args: &[&str]) -> (Value, Option<i32>) {
    let out = eavpivot(cwd, args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "eavpivot {args:?}: stdout is not one JSON object ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let code = out.status.code();
    match value["ok"].as_bool() {
        Some(true) => assert_eq!(code, Some(0), "{args:?}"),
        _ => assert_eq!(
            value["exit_code"].as_i64().map(|c| c as i32),
            code,
            "{args:?}"
        ),
    }
    (value, code)
}

/// `command --json` failing two ways: a job file the parser refuses (exit 2) and a database
/// without the source (exit 1); each failure object, and what it was.
fn failures(cwd: &Path, command: &str) -> Vec<(Value, String)> {
    std::fs::write(cwd.join("bad.yaml"), "name: x\ntabel: y\n").expect("write");
    std::fs::write(cwd.join("empty.db"), "").expect("write");
    let cases: [(&[&str], i32, &str); 2] = [
        (&["bad.yaml"], 2, "an invalid job"),
        (
            &["item_detail", "--connection", "sqlite:empty.db"],
            1,
            "a database without the source",
        ),
    ];
    cases
        .iter()
        .map(|(args, expected, what)| {
            let mut all = vec![command, "--json"];
            all.extend_from_slice(args);
            let (failure, code) = json_of(cwd, &all);
            assert_eq!(code, Some(*expected), "{command} of {what}: {failure}");
            assert_eq!(failure["ok"], json!(false), "{command} of {what}");
            (failure, format!("{command} of {what}"))
        })
        .collect()
}

#[test]
fn real_run_reports_validate() {
    let schemas = Schemas::load();
    let dir = tempfile::tempdir().expect("tmp");
    let cwd = dir.path();
    let check = |value: &Value, what: &str| schemas.assert_valid(schemas.run_report, value, what);

    let (first, _) = json_of(cwd, &["run", "item_detail", "--json"]);
    assert_eq!(first["sample_data_loaded"], json!(true));
    check(&first, "run item_detail");
    let (dry, _) = json_of(cwd, &["run", "item_detail", "--json", "--dry-run"]);
    assert_eq!(dry["dry_run"], json!(true));
    check(&dry, "run item_detail --dry-run");
    for job in ["minesweeper", "sudoku", "sudoku_sql"] {
        let (report, _) = json_of(cwd, &["run", job, "--json", "--preview", "0"]);
        assert!(
            !report["transforms"]
                .as_array()
                .expect("transforms")
                .is_empty(),
            "{job}"
        );
        check(&report, job);
    }

    // A merge into the table the first run built: `merged` filled in.
    let bundled = std::fs::read_to_string(repo().join("config/item_detail.yaml")).expect("read");
    let merge = bundled
        .replace("if_exists: replace", "if_exists: merge")
        .replace("ITEM_WIDE", "SCHEMAS_ITEM_MERGED");
    std::fs::write(cwd.join("merge.yaml"), merge).expect("write");
    json_of(cwd, &["run", "merge.yaml", "--json"]);
    let (merged, _) = json_of(cwd, &["run", "merge.yaml", "--json"]);
    assert_eq!(merged["merged"][0]["unchanged"], json!(5), "{merged:#}");
    check(&merged, "a merge");

    for (failure, what) in failures(cwd, "run") {
        check(&failure, &what);
    }

    // And a report the schema must refuse: a field it does not know.
    let mut extra = first.clone();
    extra["surprise"] = json!(1);
    assert!(schemas.check(schemas.run_report, &extra).is_err());
}

#[test]
fn real_inspect_reports_validate() {
    let schemas = Schemas::load();
    let dir = tempfile::tempdir().expect("tmp");
    let cwd = dir.path();
    let check =
        |value: &Value, what: &str| schemas.assert_valid(schemas.inspect_report, value, what);
    for job in ["item_detail", "minesweeper", "sudoku"] {
        let (survey, _) = json_of(cwd, &["inspect", job, "--json"]);
        assert!(
            !survey["attributes"]
                .as_array()
                .expect("attributes")
                .is_empty(),
            "{job}"
        );
        check(&survey, job);
    }
    for (failure, what) in failures(cwd, "inspect") {
        check(&failure, &what);
    }
    let (run, _) = json_of(cwd, &["run", "item_detail", "--json", "--dry-run"]);
    assert!(
        schemas.check(schemas.inspect_report, &run).is_err(),
        "a run report passes as an inspect report"
    );
}
