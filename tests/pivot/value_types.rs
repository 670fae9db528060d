//! A value column of a type the database's `MAX`/`MIN` does not take (PostgreSQL `boolean`,
//! `uuid`, `json`, `jsonb`, `xml`, `bit varying`; SQL Server `bit`): every run with the
//! default strategy failed in the pushdown's conflict survey (`function min(boolean) does not
//! exist`). `auto` now streams and says why, each value's text is loaded, and a forced
//! pushdown is refused before any write (exit 2).

use crate::servers;

use servers::*;

/// `(declared type, two values as SQL literals, the texts the stream loads)`.
type Case = (&'static str, [&'static str; 2], [&'static str; 2]);

async fn streamed(db: &Db, cases: &[Case]) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c = conn.as_mut();
    let dir = tempfile::tempdir().expect("temp dir");
    let text = if db.what == "mssql" {
        "NVARCHAR(20)"
    } else {
        "VARCHAR(20)"
    };
    for (i, (declared, [a, b], [text_a, text_b])) in cases.iter().enumerate() {
        let p = format!("vtype{}_{i}", std::process::id());
        let (source, target) = (format!("{p}_kv"), format!("{p}_wide"));
        drop_if_exists(c, &source).await;
        drop_if_exists(c, &target).await;
        execute_all(
            c,
            &[
                format!("CREATE TABLE {source} (id INT, attr {text}, val {declared})"),
                format!("INSERT INTO {source} VALUES (1, 'a', {a}), (1, 'b', {b}), (2, 'a', {b})"),
            ],
        )
        .await;
        let job = kv_job(dir.path(), &source, &target, "replace");
        let what = format!("{} {declared}", db.what);
        let out = run(&["run", &job.display().to_string(), "--json"], &db.url);
        assert!(out.status.success(), "{what} auto: {}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json");
        assert_eq!(report["strategy"], "stream", "{what}: {report}");
        let reason = report["strategy_reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("MAX or MIN") || reason.contains("MAX and MIN"),
            "{what}: {reason}"
        );
        let rows = read_keyed(c, db.what, &target, 1).await;
        let cell = |id: i64, column: &str| {
            rows.iter()
                .find(|(key, _)| key[0].as_i64() == Some(id))
                .and_then(|(_, cells)| cells.get(column).cloned())
                .unwrap_or_default()
        };
        let got = [cell(1, "a"), cell(1, "b"), cell(2, "a")];
        assert_eq!(got, [*text_a, *text_b, *text_b], "{what}");
        let before = fingerprint(c, &target).await;
        let out = run_strategy(&job, "pushdown", &db.url);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what} pushdown: {err}");
        assert!(
            err.contains("strategy: pushdown cannot pick among")
                && err.contains("nothing was written"),
            "{what} pushdown: {err}"
        );
        assert_eq!(
            fingerprint(c, &target).await,
            before,
            "{what}: the target as it was"
        );
        drop_if_exists(c, &source).await;
        drop_if_exists(c, &target).await;
    }
}

#[test]
fn postgres_values_without_max_are_streamed() {
    let db = postgres();
    runtime().block_on(streamed(
        &db,
        &[
            ("boolean", ["true", "false"], ["1", "0"]),
            (
                "uuid",
                [
                    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
                    "'00000000-0000-0000-0000-000000000001'",
                ],
                [
                    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                    "00000000-0000-0000-0000-000000000001",
                ],
            ),
            (
                "json",
                ["'{\"k\":  1}'", "'[1,2]'"],
                ["{\"k\":  1}", "[1,2]"],
            ),
            (
                "jsonb",
                ["'{\"k\":  1}'", "'[1,2]'"],
                ["{\"k\": 1}", "[1, 2]"],
            ),
            ("xml", ["'<a>1</a>'", "'<b/>'"], ["<a>1</a>", "<b/>"]),
            ("bit varying(8)", ["B'101'", "B'0'"], ["101", "0"]),
        ],
    ));
}

#[test]
fn mssql_bit_values_are_streamed() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(streamed(&db, &[("bit", ["1", "0"], ["1", "0"])]));
}

/// A REAL in a TEXT column: SQLite stores its text with 15 significant digits, so
/// `0.30000000000000004` became `0.3` in both strategies, and a PostgreSQL or MariaDB double
/// loaded into SQLite did the same. Each such value now gets its exact text (in SQLite's
/// layout), the same in both strategies; values SQLite prints exactly stay as it prints them.
#[test]
fn sqlite_text_columns_hold_a_reals_exact_text() {
    const CELLS: [(f64, &str); 5] = [
        (0.300_000_000_000_000_04, "0.30000000000000004"),
        (123_456_789_012_345_680.0, "1.2345678901234568e+17"),
        (4.425_160_402_714_337_5e284, "4.4251604027143375e+284"),
        (100.0, "100.0"),
        (1e-7, "1.0e-07"),
    ];
    let db = sqlite();
    let pg = postgres();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let rows: Vec<String> = CELLS
            .iter()
            .enumerate()
            .map(|(i, (f, _))| format!("({i}, 'x', {f:e})"))
            .collect();
        execute_all(
            c,
            &[
                "CREATE TABLE reals_kv (id INT, attr TEXT, val REAL)".into(),
                format!("INSERT INTO reals_kv VALUES {}", rows.join(", ")),
            ],
        )
        .await;
        let want: Vec<Vec<String>> = CELLS
            .iter()
            .enumerate()
            .map(|(i, (_, text))| vec![i.to_string(), (*text).to_string(), "text".into()])
            .collect();
        let read = "SELECT id, x, typeof(x) FROM reals_wide ORDER BY id";
        let job = kv_job(dir.path(), "reals_kv", "reals_wide", "replace");
        for strategy in ["pushdown", "stream"] {
            let out = run_strategy(&job, strategy, &db.url);
            assert!(out.status.success(), "{strategy}: {}", stderr(&out));
            assert_eq!(text_rows(c, read).await, want, "sqlite {strategy}");
        }
        // A PostgreSQL double loaded into SQLite.
        let Some(mut server) = pg.open().await else {
            return;
        };
        let s = server.as_mut();
        let p = format!("reals{}", std::process::id());
        drop_if_exists(s, &format!("{p}_kv")).await;
        execute_all(
            s,
            &[
                format!("CREATE TABLE {p}_kv (id INT, attr TEXT, val DOUBLE PRECISION)"),
                format!("INSERT INTO {p}_kv VALUES {}", rows.join(", ")),
            ],
        )
        .await;
        let job = kv_job(dir.path(), &format!("{p}_kv"), "reals_wide", "replace");
        let out = run(
            &[
                "run",
                &job.display().to_string(),
                "--target-connection",
                &db.url,
            ],
            &pg.url,
        );
        assert!(out.status.success(), "postgres to sqlite: {}", stderr(&out));
        assert_eq!(text_rows(c, read).await, want, "postgres to sqlite");
        drop_if_exists(s, &format!("{p}_kv")).await;
    });
}

/// Fresh `{prefix}{pid}_kv` (created with `columns`, holding `rows`) and a dropped
/// `{prefix}{pid}_wide`: the source and target names.
async fn fresh_kv(
    c: &mut dyn eavpivot::backend::Backend,
    prefix: &str,
    columns: &str,
    rows: &[String],
) -> (String, String) {
    let p = format!("{prefix}{}", std::process::id());
    let (source, target) = (format!("{p}_kv"), format!("{p}_wide"));
    drop_if_exists(c, &source).await;
    drop_if_exists(c, &target).await;
    execute_all(
        c,
        &[
            format!("CREATE TABLE {source} ({columns})"),
            format!("INSERT INTO {source} VALUES {}", rows.join(", ")),
        ],
    )
    .await;
    (source, target)
}

/// Values whose own type reached the stream unlike the database's text of it: SQL Server's
/// MONEY (TDS's integer of ten-thousandths, handed on by the driver as a float:
/// `900000000000000.12` was loaded as `900000000000000.1`), MariaDB's FLOAT (sent as text with 6
/// digits: `16777216` was loaded as `16777200`, `123456.7` as `123457`), PostgreSQL's
/// `character(n)` (padded by the stream, not by the pushdown) are now read as a type that gives
/// the same text to both strategies. `cases`: (SQL literal, the text loaded), one entity each.
async fn read_alike(db: &Db, declared: &str, cases: &[(&str, &str)]) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c = conn.as_mut();
    let dir = tempfile::tempdir().expect("temp dir");
    let rows: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (literal, _))| format!("({i}, 'x', {literal})"))
        .collect();
    let columns = format!("id INT, attr VARCHAR(9), val {declared}");
    // One prefix per type: the tests of one engine run at once in this process.
    let kind: String = declared
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let prefix = format!("exact_{}_", kind.to_ascii_lowercase());
    let (source, target) = fresh_kv(c, &prefix, &columns, &rows).await;
    let job = kv_job(dir.path(), &source, &target, "replace");
    for strategy in ["stream", "pushdown"] {
        let what = format!("{} {declared} {strategy}", db.what);
        let out = run_strategy(&job, strategy, &db.url);
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        let rows = read_keyed(c, db.what, &target, 1).await;
        for (i, (_, text)) in cases.iter().enumerate() {
            let cell = rows
                .iter()
                .find(|(key, _)| key[0].as_i64() == i64::try_from(i).ok())
                .and_then(|(_, cells)| cells.get("x").cloned());
            assert_eq!(cell.as_deref(), Some(*text), "{what}, entity {i}");
        }
    }
    drop_if_exists(c, &source).await;
    drop_if_exists(c, &target).await;
}

#[test]
fn mssql_money_keeps_every_digit() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(read_alike(
        &db,
        "MONEY",
        &[
            ("900000000000000.12", "900000000000000.1200"),
            ("922337203685477.5807", "922337203685477.5807"),
            ("-922337203685477.5808", "-922337203685477.5808"),
            ("12.35", "12.3500"),
        ],
    ));
}

#[test]
fn mariadb_float_keeps_every_digit() {
    let db = mariadb();
    runtime().block_on(read_alike(
        &db,
        "FLOAT",
        &[
            ("16777216", "16777216"),
            ("123456.7", "123456.703125"),
            ("1.1", "1.100000023841858"),
        ],
    ));
}

/// MariaDB sends a BIT(n) as its bytes: the stream wrote b'1010' as the byte 0x0A (a newline)
/// where the pushdown writes its number, `10`, and refused b'10000000' as not UTF-8. Both now
/// write the number, up to BIT(64)'s largest.
#[test]
fn mariadb_bit_values_are_their_number_in_both_strategies() {
    let db = mariadb();
    runtime().block_on(read_alike(
        &db,
        "BIT(64)",
        &[
            ("b'1010'", "10"),
            ("b'0'", "0"),
            ("b'10000000'", "128"),
            (
                "b'1111111111111111111111111111111111111111111111111111111111111111'",
                "18446744073709551615",
            ),
        ],
    ));
}

/// A `bytea` that is not UTF-8 cannot be a text cell: the stream's load failed with the
/// driver's `invalid utf-8 sequence of 1 bytes from index 1`. It now names the value and the
/// way out, and nothing is written.
#[test]
fn postgres_bytes_that_are_not_text_are_refused_naming_the_value() {
    let db = postgres();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let rows = [
            "(1, 'x', 'abc'::bytea)".to_string(),
            "(2, 'x', '\\x00ff')".to_string(),
        ];
        let (source, target) =
            fresh_kv(c, "notutf8", "id INT, attr VARCHAR(9), val bytea", &rows).await;
        let job = kv_job(dir.path(), &source, &target, "replace");
        let out = run(&["run", &job.display().to_string()], &db.url);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("the value \\x00ff is bytes that are not UTF-8 text")
                && err.contains("nothing was written"),
            "{err}"
        );
        let tables = format!("SELECT COUNT(*) FROM pg_class WHERE relname = '{target}'");
        assert_eq!(text_rows(c, &tables).await, [["0"]], "no target table");
        drop_if_exists(c, &source).await;
    });
}

#[test]
fn postgres_character_values_lose_their_padding_in_both_strategies() {
    let db = postgres();
    runtime().block_on(read_alike(
        &db,
        "CHAR(5)",
        &[("'ab'", "ab"), ("'x y'", "x y"), ("' a'", " a")],
    ));
}

/// Entity keys of those types were written back as the stream read them: a MariaDB FLOAT key
/// `16777216` became `16777200` and `123456.7` became `123457` (exit 0), a MONEY key lost its
/// last digits. Keys are now read as the value is, and keep their own type in the target.
/// `exact`: the key as the database prints it read `AS` this type.
async fn keys_alike(db: &Db, declared: &str, exact: &str, keys: &[(&str, &str)]) {
    let Some(mut conn) = db.open().await else {
        return;
    };
    let c = conn.as_mut();
    let dir = tempfile::tempdir().expect("temp dir");
    let rows: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(i, (literal, _))| format!("({literal}, 'x', '{i}')"))
        .collect();
    let columns = format!("id {declared}, attr VARCHAR(9), val VARCHAR(9)");
    let (source, target) = fresh_kv(c, "keys", &columns, &rows).await;
    let job = kv_job(dir.path(), &source, &target, "replace");
    let read = format!("SELECT CAST(id AS {exact}), x FROM {target} ORDER BY id");
    let want: Vec<Vec<String>> = {
        let mut want: Vec<(f64, Vec<String>)> = keys
            .iter()
            .enumerate()
            .map(|(i, (literal, text))| {
                let order = literal.parse().expect("a numeral");
                (order, vec![(*text).to_string(), i.to_string()])
            })
            .collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0));
        want.into_iter().map(|(_, row)| row).collect()
    };
    for strategy in ["stream", "pushdown"] {
        let what = format!("{} {declared} key, {strategy}", db.what);
        let out = run_strategy(&job, strategy, &db.url);
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        assert_eq!(text_rows(c, &read).await, want, "{what}");
    }
    // `--conflicts` lists a conflicting key as the run writes it (it printed the key as the
    // driver read it: the FLOAT `123456.7` as `123457`).
    let (literal, text) = keys[keys.len() - 1];
    execute_all(
        c,
        &[format!(
            "INSERT INTO {source} VALUES ({literal}, 'x', 'other')"
        )],
    )
    .await;
    let csv = dir.path().join("conflicts.csv");
    let (csv_arg, job_arg) = (csv.display().to_string(), job.display().to_string());
    let out = run(
        &["run", "--dry-run", "--conflicts", &csv_arg, &job_arg],
        &db.url,
    );
    assert!(stderr(&out).contains("written to"), "{}", stderr(&out));
    let listed = std::fs::read_to_string(&csv).expect("conflicts CSV");
    let key = listed.lines().nth(1).and_then(|l| l.split(',').next());
    assert_eq!(
        key,
        Some(text),
        "{} {declared} --conflicts: {listed}",
        db.what
    );
    drop_if_exists(c, &source).await;
    drop_if_exists(c, &target).await;
}

#[test]
fn mariadb_float_keys_keep_every_digit() {
    let db = mariadb();
    runtime().block_on(keys_alike(
        &db,
        "FLOAT",
        "DOUBLE",
        &[("16777216", "16777216"), ("123456.7", "123456.703125")],
    ));
}

#[test]
fn mssql_money_keys_keep_every_digit() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(keys_alike(
        &db,
        "MONEY",
        "DECIMAL(19,4)",
        &[
            ("900000000000000.12", "900000000000000.1200"),
            ("922337203685477.5807", "922337203685477.5807"),
        ],
    ));
}

/// A PostgreSQL `real` or `double precision` in a text column was spelled two ways: the
/// pushdown's CAST wrote PostgreSQL's text (`1e+20`, `1.6777216e+07`), the stream Rust's
/// (`100000000000000000000`, `16777216`), so the same job wrote other texts when `auto` chose
/// the other strategy, and a merge rewrote them. Both now write exactly what `val::text` prints,
/// checked on every value of a random sample (every exponent, subnormals), every power of
/// two and the edges.
#[test]
fn postgres_floats_are_written_as_postgres_prints_them_by_both_strategies() {
    let db = postgres();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let edges = [
            "'NaN'",
            "'Infinity'",
            "'-Infinity'",
            "'-0'",
            "0",
            "1e-5",
            "0.0001",
            "1e15",
            "123456789012345",
            "1e6",
            "123456",
            "0.1",
            "16777216",
        ];
        let types = [
            (
                "double precision",
                false,
                ["5e-324", "1.7976931348623157e308"],
                -1074..1024,
            ),
            ("real", true, ["1e-45", "3.4028235e38"], -149..128),
        ];
        for (declared, single, extremes, powers) in types {
            let mut literals: Vec<String> = edges
                .iter()
                .chain(&extremes)
                .map(|e| e.to_string())
                .collect();
            // Powers of two: the one spacing that differs below and above the value.
            literals.extend(powers.map(|p| format!("'{:e}'", 2f64.powi(p))));
            while literals.len() < 4000 {
                let value = match single {
                    true => f64::from(f32::from_bits(next() as u32)),
                    false => f64::from_bits(next()),
                };
                if value.is_finite() {
                    literals.push(format!("'{value:e}'"));
                }
            }
            let rows: Vec<String> = literals
                .iter()
                .enumerate()
                .map(|(i, literal)| format!("({i}, 'x', {literal})"))
                .collect();
            let columns = format!("id INT, attr VARCHAR(9), val {declared}");
            let (source, target) = fresh_kv(c, "floats", &columns, &rows).await;
            let printed: std::collections::HashMap<i64, String> =
                text_rows(c, &format!("SELECT id, val::text FROM {source}"))
                    .await
                    .into_iter()
                    .map(|r| (r[0].parse().expect("id"), r[1].clone()))
                    .collect();
            let job = kv_job(dir.path(), &source, &target, "replace");
            for strategy in ["stream", "pushdown"] {
                let what = format!("postgres {declared} {strategy}");
                let out = run_strategy(&job, strategy, &db.url);
                assert!(out.status.success(), "{what}: {}", stderr(&out));
                let written = read_keyed(c, db.what, &target, 1).await;
                assert_eq!(written.len(), printed.len(), "{what}: rows");
                for (key, cells) in &written {
                    let id = key[0].as_i64().expect("id");
                    assert_eq!(cells.get("x"), printed.get(&id), "{what}, entity {id}");
                }
            }
            drop_if_exists(c, &source).await;
            drop_if_exists(c, &target).await;
        }
    });
}

/// What the column takes is decided on the text that will be written. A table `column_type`
/// that is not text (`NUMERIC(30,2)`) gets the float as a number from both strategies, not
/// PostgreSQL's `1e+20`, which a NUMERIC does not read from the stream; a declared
/// `VARCHAR(10)` is checked against PostgreSQL's text: a real `16777216` is `1.6777216e+07`,
/// 13 characters, refused before any write, and a double `1e-300` fits (Rust's text of it is
/// 302 characters).
#[test]
fn postgres_floats_fit_their_column_as_postgres_prints_them() {
    let db = postgres();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let jobs = |source: &str, target: &str, pivot: &str| {
            let job = kv_job(dir.path(), source, target, "replace");
            append_to_job(&job, &format!("pivot: {pivot}"));
            job
        };
        let rows = ["(1, 'x', 1e20)", "(2, 'x', 0.5)", "(3, 'x', 16777216)"].map(String::from);
        let (source, target) = fresh_kv(
            c,
            "floatfit",
            "id INT, attr VARCHAR(9), val double precision",
            &rows,
        )
        .await;
        let numeric = jobs(&source, &target, "{column_type: \"NUMERIC(30,2)\"}");
        let mut tables = Vec::new();
        for strategy in ["stream", "pushdown"] {
            let out = run_strategy(&numeric, strategy, &db.url);
            assert!(out.status.success(), "NUMERIC {strategy}: {}", stderr(&out));
            tables
                .push(text_rows(c, &format!("SELECT id, x::text FROM {target} ORDER BY id")).await);
        }
        assert_eq!(tables[0], tables[1], "NUMERIC(30,2): stream, then pushdown");
        assert_eq!(tables[0][0][1], "100000000000000000000.00");

        let rows = ["(1, 'x', 16777216)"].map(String::from);
        let columns = "id INT, attr VARCHAR(9), val real";
        let (source, target) = fresh_kv(c, "floatfit", columns, &rows).await;
        let narrow = jobs(&source, &target, "{types: {x: \"VARCHAR(10)\"}}");
        for strategy in ["stream", "pushdown"] {
            let out = run_strategy(&narrow, strategy, &db.url);
            let err = stderr(&out);
            assert!(!out.status.success(), "VARCHAR(10) {strategy}: {err}");
            assert!(
                err.contains(
                    "'1.6777216e+07' for entity 1 does not convert to it exactly; nothing was written"
                ),
                "VARCHAR(10) {strategy}: {err}"
            );
            let left = text_rows(
                c,
                &format!("SELECT COUNT(*) FROM pg_class WHERE relname = '{target}'"),
            )
            .await;
            assert_eq!(
                left[0][0], "0",
                "VARCHAR(10) {strategy}: a table was written"
            );
        }

        let rows = ["(1, 'x', 1e-300)"].map(String::from);
        let columns = "id INT, attr VARCHAR(9), val double precision";
        let (source, target) = fresh_kv(c, "floatfit", columns, &rows).await;
        let narrow = jobs(&source, &target, "{types: {x: \"VARCHAR(10)\"}}");
        for strategy in ["stream", "pushdown"] {
            let out = run_strategy(&narrow, strategy, &db.url);
            assert!(out.status.success(), "1e-300 {strategy}: {}", stderr(&out));
            let written = text_rows(c, &format!("SELECT x FROM {target}")).await;
            assert_eq!(written, [["1e-300"]], "1e-300 {strategy}");
        }
        drop_if_exists(c, &source).await;
        drop_if_exists(c, &target).await;
    });
}

/// A conflict between two PostgreSQL doubles (`pivot.aggregate: error`) is named as the cells
/// would hold them, by both strategies: the stream said `'1e+20' vs '2e+20'` and the pushdown's
/// survey `'100000000000000000000' vs '200000000000000000000'`; `--conflicts` lists them so too.
#[test]
fn postgres_float_conflicts_are_named_alike_by_both_strategies() {
    let db = postgres();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let rows = ["(1, 'x', 1e20)", "(1, 'x', 2e20)", "(2, 'x', 0.5)"].map(String::from);
        let columns = "id INT, attr VARCHAR(9), val double precision";
        let (source, target) = fresh_kv(c, "floatconflict", columns, &rows).await;
        let job = kv_job(dir.path(), &source, &target, "replace");
        append_to_job(&job, "pivot: {aggregate: error}");
        for strategy in ["stream", "pushdown"] {
            let out = run_strategy(&job, strategy, &db.url);
            let err = stderr(&out);
            assert!(!out.status.success(), "{strategy}: {err}");
            assert!(
                err.contains("(1) 'x': '1e+20' vs '2e+20'"),
                "{strategy}: {err}"
            );
        }
        // And `--conflicts`' CSV lists them the same way.
        let csv = dir.path().join("conflicts.csv");
        let (csv_arg, job_arg) = (csv.display().to_string(), job.display().to_string());
        let out = run(
            &["run", "--dry-run", "--conflicts", &csv_arg, &job_arg],
            &db.url,
        );
        // Written in full even though this job then refuses them.
        assert!(
            stderr(&out).contains("written to"),
            "--conflicts: {}",
            stderr(&out)
        );
        let listed = std::fs::read_to_string(&csv).expect("conflicts CSV");
        assert!(
            listed.contains("1,x,2,1e+20,2e+20"),
            "--conflicts: {listed}"
        );
        drop_if_exists(c, &source).await;
        drop_if_exists(c, &target).await;
    });
}

/// A DATETIME2, TIME or DATETIMEOFFSET value in a text column is the server's own text of it in both
/// strategies: SQL Server pads the fraction to the type's scale (`05.1000000`), as the stream
/// printed it, but Babelfish trims it (`05.1`), so there a merge by the other strategy rewrote
/// every such cell. Each strategy's load is now checked against `CAST(val AS NVARCHAR(40))` and
/// a merge by the other finds every entity unchanged. A DATETIMEOFFSET entity key, which the
/// stream's INSERT bound as text that Babelfish does not convert, loads by both.
#[test]
fn mssql_times_are_the_servers_text_in_both_strategies() {
    let Some(db) = mssql() else {
        return;
    };
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let values = [
            (
                "DATETIME2(7)",
                "'2020-01-02 03:04:05.1'",
                "'2020-01-02 03:04:05'",
            ),
            (
                "DATETIME2(3)",
                "'2020-01-02 03:04:05.12'",
                "'1999-12-31 23:59:59.999'",
            ),
            ("TIME(7)", "'03:04:05.5'", "'23:59:59'"),
            (
                "DATETIMEOFFSET(7)",
                "'2020-01-02 03:04:05 +02:00'",
                "'2020-01-02 03:04:05.25 -05:30'",
            ),
        ];
        for (i, (declared, a, b)) in values.iter().enumerate() {
            let rows = [format!("(1, N'x', {a})"), format!("(2, N'x', {b})")];
            let columns = format!("id INT, attr NVARCHAR(9), val {declared}");
            let (source, target) = fresh_kv(c, &format!("times{i}_"), &columns, &rows).await;
            let servers_text = text_rows(
                c,
                &format!("SELECT CAST(val AS NVARCHAR(40)) FROM {source} ORDER BY id"),
            )
            .await;
            let read = format!("SELECT x FROM {target} ORDER BY id");
            let table = (source.as_str(), target.as_str());
            load_then_merge_by_the_other(c, &db, dir.path(), table, &read, &servers_text).await;
            drop_if_exists(c, &source).await;
            drop_if_exists(c, &target).await;
        }
        let rows = [
            "('2020-01-02 03:04:05.1 +02:00', N'x', N'a')".to_string(),
            "('2020-01-02 03:04:05 -05:30', N'x', N'b')".to_string(),
        ];
        let columns = "id DATETIMEOFFSET(7), attr NVARCHAR(9), val NVARCHAR(9)";
        let (source, target) = fresh_kv(c, "offsetkey", columns, &rows).await;
        for strategy in ["stream", "pushdown"] {
            let job = kv_job(dir.path(), &source, &target, "replace");
            let out = run_strategy(&job, strategy, &db.url);
            assert!(out.status.success(), "{strategy}: {}", stderr(&out));
            let same = format!(
                "SELECT COUNT(*) FROM {target} t JOIN {source} s ON s.id = t.id AND s.val = t.x"
            );
            assert_eq!(text_rows(c, &same).await, [["2"]], "{strategy}");
        }
        drop_if_exists(c, &source).await;
        drop_if_exists(c, &target).await;
    });
}

/// A PostgreSQL `date` or `timestamp` entity key of `infinity`, `-infinity` or a BC date: the
/// pushdown loaded them, the stream refused the load (`value 'infinity' is not a canonical
/// timestamp`), so `auto` failed on small tables only. Both strategies now load every key as
/// it is in the source.
#[test]
fn postgres_infinite_and_bc_date_keys_load_by_both_strategies() {
    let db = postgres();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        for declared in ["date", "timestamp"] {
            let keys = [
                "infinity",
                "-infinity",
                "0044-03-15 BC",
                "0001-12-31 BC",
                "2020-02-29",
            ];
            let rows: Vec<String> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| format!("('{k}', 'x', '{i}')"))
                .collect();
            let columns = format!("id {declared}, attr VARCHAR(9), val VARCHAR(9)");
            let (source, target) = fresh_kv(c, "infkeys", &columns, &rows).await;
            let job = kv_job(dir.path(), &source, &target, "replace");
            let same = format!(
                "SELECT COUNT(*) FROM {target} t JOIN {source} s ON s.id = t.id AND s.val = t.x"
            );
            for strategy in ["stream", "pushdown"] {
                let out = run_strategy(&job, strategy, &db.url);
                assert!(
                    out.status.success(),
                    "{declared} {strategy}: {}",
                    stderr(&out)
                );
                let count = format!("SELECT COUNT(*) FROM {target}");
                assert_eq!(text_rows(c, &count).await, [["5"]], "{declared} {strategy}");
                assert_eq!(text_rows(c, &same).await, [["5"]], "{declared} {strategy}");
            }
            drop_if_exists(c, &source).await;
            drop_if_exists(c, &target).await;
        }
    });
}

/// A MariaDB entity key of type YEAR, TIME or BIT had no type in the target's `CREATE TABLE`
/// (`` `id`, `` — a syntax error), so every run of such a job failed. The key columns now
/// get YEAR, TIME(n) and, for a BIT read as its number, BIGINT UNSIGNED; both strategies load
/// every key, and a merge by the other strategy finds every entity unchanged.
#[test]
fn mariadb_year_time_and_bit_keys_load_by_both_strategies() {
    let db = mariadb();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let cases = [
            ("YEAR", ["2020", "1999"], ["2020", "1999"]),
            (
                "TIME(3)",
                ["'-03:04:05.5'", "'838:59:59'"],
                ["-03:04:05.500", "838:59:59.000"],
            ),
            ("BIT(8)", ["b'1010'", "b'10000001'"], ["10", "129"]),
        ];
        for (declared, [a, b], [key_a, key_b]) in cases {
            let rows = [format!("({a}, 'x', 'a')"), format!("({b}, 'x', 'b')")];
            let columns = format!("id {declared}, attr VARCHAR(9), val VARCHAR(9)");
            let (source, target) = fresh_kv(c, "mkeys", &columns, &rows).await;
            let read = format!("SELECT CAST(id AS CHAR), x FROM {target} ORDER BY x");
            let want = [[key_a, "a"], [key_b, "b"]];
            let table = (source.as_str(), target.as_str());
            load_then_merge_by_the_other(c, &db, dir.path(), table, &read, &want).await;
            drop_if_exists(c, &source).await;
            drop_if_exists(c, &target).await;
        }
    });
}

/// A PostgreSQL `bit(4)` entity key made a `bit` key column — bit(1) — which refused every
/// key (`bit string length 4 does not match type bit(1)`): every run failed. The key column
/// keeps the length now, by both strategies, and a merge by the other changes nothing.
#[test]
fn postgres_bit_string_keys_keep_their_length() {
    let db = postgres();
    runtime().block_on(async {
        let Some(mut conn) = db.open().await else {
            return;
        };
        let c = conn.as_mut();
        let dir = tempfile::tempdir().expect("temp dir");
        let rows = [
            "(B'1010', 'x', 'a')".to_string(),
            "(B'0001', 'x', 'b')".to_string(),
        ];
        let columns = "id bit(4), attr VARCHAR(9), val VARCHAR(9)";
        let (source, target) = fresh_kv(c, "bitkeys", columns, &rows).await;
        let read = format!("SELECT CAST(id AS text), x FROM {target} ORDER BY x");
        let want = [["1010", "a"], ["0001", "b"]];
        let table = (source.as_str(), target.as_str());
        load_then_merge_by_the_other(c, &db, dir.path(), table, &read, &want).await;
        drop_if_exists(c, &source).await;
        drop_if_exists(c, &target).await;
    });
}

/// Each strategy in turn loads `source` into `target` (`replace`) and the other merges it
/// again: `read` gives `want` after both, and the merge finds every entity unchanged
/// (`--json`'s `merged[0]`: none updated), as many as `want` has rows.
async fn load_then_merge_by_the_other<W: std::fmt::Debug>(
    c: &mut dyn eavpivot::backend::Backend,
    db: &Db,
    dir: &std::path::Path,
    (source, target): (&str, &str),
    read: &str,
    want: &[W],
) where
    Vec<String>: PartialEq<W>,
{
    for (first, second) in [("stream", "pushdown"), ("pushdown", "stream")] {
        let what = format!("{} {source}: {first}, then a merge by {second}", db.what);
        let job = kv_job(dir, source, target, "replace");
        let out = run_strategy(&job, first, &db.url);
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        assert_eq!(text_rows(c, read).await, want, "{what}");
        let job = kv_job(dir, source, target, "merge");
        let args = [
            "run",
            &job.display().to_string(),
            "--json",
            "--strategy",
            second,
        ];
        let out = run(&args, &db.url);
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json");
        let merged = &report["merged"][0];
        assert_eq!(
            (&merged["updated"], &merged["unchanged"]),
            (&serde_json::json!(0), &serde_json::json!(want.len())),
            "{what}: {report}"
        );
        assert_eq!(text_rows(c, read).await, want, "{what}");
    }
}
