//! The standalone script of every step it can do (a first load or `replace`, text columns,
//! `max`/`min`, one table, one database), run the way a DBA runs it (`psql -f`, the `mariadb`
//! client, a T-SQL batch) into a table of its own, and read back against the same model as
//! `eavpivot run`. Where the run named a column otherwise than its attribute (a collision, a
//! name the database cannot hold), the script refuses by design and is not compared.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use super::exec::{self, Names};
use super::gen::Case;
use super::model::{Agg, Step, Target};
use super::numbers::Column;

/// The script dialect of a leg; None where there is no script to compare (SQLite has no
/// dynamic SQL). On Citus the PostgreSQL script distributes its table like the source.
fn dialect(leg: &str) -> Option<&'static str> {
    match leg {
        "postgres" | "postgres_ci" | "postgres_citext" | "citus" => Some("postgres"),
        "mariadb" | "mariadb_latin1" => Some("mariadb"),
        "mssql" => Some("mssql"),
        _ => None,
    }
}

/// Whether a script does what this step asks of `eavpivot run`, given the run's column map.
pub fn applies(
    case: &Case,
    step: &Step,
    leg: &str,
    map: &BTreeMap<String, (String, String)>,
) -> bool {
    let job = &case.job;
    let plain = !step.merge
        && !job.infer
        && job.types.is_empty()
        && job.split.is_none()
        && matches!(job.aggregate, Agg::Max | Agg::Min);
    plain && dialect(leg).is_some() && map.iter().all(|(a, (_, c))| a == c)
}

/// The table the script writes for `names`.
pub fn table(names: &Names) -> String {
    format!("{}_s", names.target)
}

/// Runs the script of `step` on `leg` and compares its table with `expected`; the script's
/// table is dropped by the caller's cleanup.
#[allow(clippy::too_many_arguments)]
pub fn check(
    rt: &tokio::runtime::Runtime,
    db: &mut exec::Db,
    dir: &Path,
    case: &Case,
    step: &Step,
    names: &Names,
    map: &BTreeMap<String, (String, String)>,
    expected: &Target,
) -> Result<(), String> {
    let leg = db.what;
    let Some(dialect) = dialect(leg) else {
        return Ok(());
    };
    let own = Names {
        source: names.source.clone(),
        attrs: names.attrs.clone(),
        target: table(names),
    };
    let job = dir.join(format!("{}.yaml", own.target));
    std::fs::write(&job, exec::job_yaml(case, step, &own)).expect("write job");
    let file = dir.join(format!("{}.sql", own.target));
    let mut args: Vec<String> = [
        "script",
        &job.display().to_string(),
        "--dialect",
        dialect,
        "-q",
        "-o",
    ]
    .map(String::from)
    .to_vec();
    args.push(file.display().to_string());
    if let Some(g) = step.where_g {
        args.extend(["--var".into(), format!("g={g}")]);
    }
    let made = exec::run(&args);
    if made.code != Some(0) {
        return Err(format!("eavpivot script failed: {}", made.stderr.trim()));
    }
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    match dialect {
        // SQL Server converts a FLOAT to text with 6 digits: the script refuses such values
        // (the guide), before it writes a table.
        "mssql" if case.values == Column::Double => {
            return match rt.block_on(db.conn.execute_script(&text)) {
                Err(e) if e.to_string().contains("converts a FLOAT or REAL to text") => Ok(()),
                Err(e) => Err(format!("the T-SQL script failed otherwise than refusing FLOAT values: {e}")),
                Ok(()) => Err("the T-SQL script took FLOAT values, which SQL Server converts to text with 6 digits".into()),
            };
        }
        "mssql" => rt
            .block_on(db.conn.execute_script(&text))
            .map_err(|e| format!("the T-SQL script failed: {e}"))?,
        _ => client(dialect, &db.url, &file)?,
    }
    let map: BTreeMap<String, (String, String)> = map
        .iter()
        .map(|(a, (_, c))| (a.clone(), (own.target.clone(), c.clone())))
        .collect();
    let actual = rt
        .block_on(exec::read_target(
            db.conn.as_mut(),
            leg,
            case,
            std::slice::from_ref(&own.target),
            &map,
        ))
        .map_err(|e| format!("reading the script's table back: {e}"))?;
    super::check::compare(case, expected, &actual)
        .map_err(|e| format!("`eavpivot script --dialect {dialect}`'s table: {e}"))
}

/// `file` through the database's own client, as a DBA runs it.
fn client(dialect: &str, url: &str, file: &Path) -> Result<(), String> {
    let mut cmd = match dialect {
        "postgres" => {
            let mut c = Command::new("psql");
            c.args([url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f"])
                .arg(file);
            c
        }
        _ => {
            // mariadb://user[:password]@host:port/db; the password goes by environment.
            let parsed = url::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
            let mut c = Command::new("mariadb");
            c.args(["-h", parsed.host_str().unwrap_or("127.0.0.1")])
                .args(["-P", &parsed.port().unwrap_or(3306).to_string()])
                .args(["-u", parsed.username()])
                .arg(parsed.path().trim_start_matches('/'))
                .env("MYSQL_PWD", parsed.password().unwrap_or(""))
                .stdin(std::fs::File::open(file).map_err(|e| e.to_string())?);
            c
        }
    };
    let out = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("the {dialect} client could not start: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "the script failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}
