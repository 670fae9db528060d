//! Job files are read as YAML 1.2 (yaml_serde, the maintained serde_yaml): the YAML 1.1
//! booleans `yes`, `no`, `on`, `off`, `y`, `n` are plain strings wherever a job holds names or
//! values, and `split: off` keeps meaning "no split".

use std::path::Path;

use eavpivot::config::{parse_job, ColumnSelection, Split, TransformSpec};

const JOB: &str = r#"
name: flags
source: { table: FLAGS }
entity: [id]
attribute: name
value: val
pivot:
  columns: [yes, no, on, off, y, n]
  exclude: [off]
  rename: { yes: agreed, on: enabled }
target: { table: FLAGS_WIDE, split: off }
transforms:
  - map: { values: { yes: no, on: off, y: n }, default: keep }
"#;

#[test]
fn yaml_1_1_booleans_stay_strings_in_names_and_values() {
    let job = parse_job(JOB, Path::new("flags.yaml")).expect("valid job");
    let words = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        job.pivot.columns,
        ColumnSelection::List(words(&["yes", "no", "on", "off", "y", "n"]))
    );
    assert!(job.pivot.exclude.contains("off"));
    assert_eq!(
        job.pivot.rename.get("yes").map(String::as_str),
        Some("agreed")
    );
    assert_eq!(
        job.pivot.rename.get("on").map(String::as_str),
        Some("enabled")
    );
    assert_eq!(job.target.split, Split::Off);
    let TransformSpec::Map { values, .. } = &job.transforms[0] else {
        panic!("expected a map transform, got {:?}", job.transforms[0]);
    };
    assert_eq!(values.get("yes"), Some(&Some("no".to_string())));
    assert_eq!(values.get("on"), Some(&Some("off".to_string())));
    assert_eq!(values.get("y"), Some(&Some("n".to_string())));
}

#[test]
fn split_keywords_and_numbers_still_parse() {
    for (given, expected) in [
        ("off", Split::Off),
        ("\"off\"", Split::Off),
        ("auto", Split::Auto),
        ("300", Split::Columns(300)),
    ] {
        let text = JOB.replace("split: off", &format!("split: {given}"));
        let job = parse_job(&text, Path::new("flags.yaml")).expect("valid job");
        assert_eq!(job.target.split, expected, "split: {given}");
    }
    let bad = JOB.replace("split: off", "split: sometimes");
    let err = parse_job(&bad, Path::new("flags.yaml")).expect_err("invalid split");
    assert!(err.to_string().contains("split"), "{err}");
}
