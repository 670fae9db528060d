//! `lock_timeout` (job key) and `--lock-timeout` (flag): defaults, overrides and refusals.

use std::path::Path;

use assert_cmd::Command;
use predicates::str::contains;

fn job(dir: &Path, extra: &str) -> std::path::PathBuf {
    let path = dir.join("job.yaml");
    std::fs::write(
        &path,
        format!("name: j\nsource: {{ table: kv, alias: k }}\nentity: [k.id]\nattribute: k.attr\nvalue: k.val\ntarget: {{ table: wide }}\n{extra}"),
    )
    .expect("job file");
    path
}

#[test]
fn the_job_key_is_read_and_checked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ok = eavpivot::config::load_job(&job(dir.path(), "")).expect("default");
    assert_eq!(ok.lock_timeout.as_secs(), 30);
    let set = eavpivot::config::load_job(&job(dir.path(), "lock_timeout: 7\n")).expect("set");
    assert_eq!(set.lock_timeout.as_secs(), 7);
    let err = eavpivot::config::load_job(&job(dir.path(), "lock_timeout: 0\n"))
        .expect_err("0 would mean wait for ever");
    assert!(err.to_string().contains("lock_timeout"), "{err}");
}

#[test]
fn a_zero_flag_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = job(dir.path(), "");
    Command::cargo_bin("eavpivot")
        .expect("binary")
        .current_dir(dir.path())
        .args([
            "run",
            path.to_str().expect("utf-8 path"),
            "--lock-timeout",
            "0",
        ])
        .assert()
        .code(2)
        .stderr(contains(
            "--lock-timeout: expected 1 to 86400 seconds, got 0",
        ));
}
