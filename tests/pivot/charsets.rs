//! Text a database's character set or modes would change (MariaDB): every value is written
//! as the source holds it, or the run fails and says so — never `?`, never UTF-8 bytes read as
//! Latin-1 characters. Through the real binary, both strategies, cells compared by their bytes.
//!
//! - A schema whose default character set is `latin1` (or `utf8mb3`): eavpivot's tables are
//!   created in `utf8mb4`, with the `utf8mb4` twin of a `utf8mb3` default collation.
//! - A server whose `sql_mode` is not strict: a value a user's column cannot hold fails the
//!   merge (rolled back), where it was stored as `?`.

use crate::servers;

use eavpivot::backend::Backend;
use servers::*;

/// Values that need every byte width of UTF-8: Latin-1 holds only the first three.
const VALUES: [&str; 5] = ["plain", "é", "a'b", "☃", "😀"];

fn url_of(db: &Db, database: &str) -> String {
    let (server, _) = db.url.rsplit_once('/').expect("a database in the URL");
    format!("{server}/{database}")
}

/// `id → HEX(column)` of `table`, in id order.
async fn hex_cells(c: &mut dyn Backend, table: &str, column: &str) -> Vec<(i64, String)> {
    let sql = format!("SELECT id, HEX(`{column}`) FROM {table} ORDER BY id");
    c.query(&sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .map(|r| {
            let id = r[0].as_i64().expect("id");
            (id, r[1].as_text().unwrap_or_default())
        })
        .collect()
}

fn expected_hex(values: &[&str]) -> Vec<(i64, String)> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| (i as i64 + 1, upper_hex(v)))
        .collect()
}

async fn source(c: &mut dyn Backend, attr: &str, values: &[&str]) {
    let rows: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("({}, '{attr}', '{}')", i + 1, v.replace('\'', "''")))
        .collect();
    execute_all(
        c,
        &[
            "DROP TABLE IF EXISTS charset_kv".into(),
            "CREATE TABLE charset_kv (id INT, attr VARCHAR(20), val VARCHAR(100)) CHARACTER SET utf8mb4".into(),
            format!("INSERT INTO charset_kv VALUES {}", rows.join(", ")),
        ],
    )
    .await;
}

async fn table_collation(c: &mut dyn Backend, database: &str, table: &str) -> String {
    let sql = format!(
        "SELECT table_collation FROM information_schema.tables WHERE table_schema = '{database}' AND table_name = '{table}'"
    );
    names(c, &sql).await.into_iter().next().unwrap_or_default()
}

/// A `latin1` schema and a `utf8mb3_unicode_ci` one: a replace, then a merge that adds a
/// column (MariaDB's merge copy), take every value exactly; the tables are `utf8mb4`, with the
/// collation of the same rules where the schema's has a `utf8mb4` twin.
#[test]
fn mariadb_tables_hold_every_value_whatever_the_schema_default() {
    let db = mariadb();
    runtime().block_on(async {
        let Some(mut admin) = db.open().await else {
            return;
        };
        let pid = std::process::id();
        let cases = [
            (
                format!("charsets{pid}_l1"),
                "CHARACTER SET latin1",
                "utf8mb4_general_ci",
            ),
            (
                format!("charsets{pid}_u3"),
                "CHARACTER SET utf8mb3 COLLATE utf8mb3_unicode_ci",
                "utf8mb4_unicode_ci",
            ),
        ];
        let dir = tempfile::tempdir().expect("temp dir");
        for (database, charset, collation) in &cases {
            execute_all(
                admin.as_mut(),
                &[
                    format!("DROP DATABASE IF EXISTS {database}"),
                    format!("CREATE DATABASE {database} {charset}"),
                ],
            )
            .await;
            let url = url_of(&db, database);
            let mut c = connect_or_skip("mariadb", &url)
                .await
                .expect("the new database");
            for strategy in ["pushdown", "stream"] {
                source(c.as_mut(), "Size", &VALUES).await;
                drop_if_exists(c.as_mut(), "charset_wide").await;
                let replace = kv_job(dir.path(), "charset_kv", "charset_wide", "replace");
                let out = run_strategy(&replace, strategy, &url);
                assert!(
                    out.status.success(),
                    "{database} {strategy}: {}",
                    stderr(&out)
                );
                let what = format!("{database} {strategy} replace");
                assert_eq!(
                    hex_cells(c.as_mut(), "charset_wide", "Size").await,
                    expected_hex(&VALUES),
                    "{what}"
                );
                assert_eq!(
                    &table_collation(c.as_mut(), database, "charset_wide").await,
                    collation,
                    "{what}"
                );
                // A new attribute: the merge goes through a copy of the target.
                source(c.as_mut(), "Colour", &VALUES).await;
                let merge = kv_job(dir.path(), "charset_kv", "charset_wide", "merge");
                let out = run_strategy(&merge, strategy, &url);
                assert!(
                    out.status.success(),
                    "{database} {strategy} merge: {}",
                    stderr(&out)
                );
                let what = format!("{database} {strategy} merge");
                assert_eq!(
                    hex_cells(c.as_mut(), "charset_wide", "Colour").await,
                    expected_hex(&VALUES),
                    "{what}"
                );
            }
            drop(c);
            execute_all(admin.as_mut(), &[format!("DROP DATABASE {database}")]).await;
        }
    });
}

/// Puts the server's global `sql_mode` back when the test ends, even by a panic.
struct GlobalMode<'a> {
    url: &'a str,
    was: String,
}

impl Drop for GlobalMode<'_> {
    fn drop(&mut self) {
        let (url, was) = (self.url.to_string(), self.was.replace('\'', ""));
        let _ = std::thread::spawn(move || {
            runtime().block_on(async {
                if let Some(mut c) = connect_or_skip("mariadb", &url).await {
                    let _ = c.execute(&format!("SET GLOBAL sql_mode = '{was}'")).await;
                }
            })
        })
        .join();
    }
}

/// A server set to `sql_mode = ''`: a value the user's `latin1` column cannot hold (`☃`) made
/// the merge store `?` and report success. eavpivot's sessions are strict: the merge fails,
/// rolled back, the column as it was. (Other tests' connections are eavpivot's, strict too, so
/// the global change for the length of this test changes nothing for them.)
#[test]
fn mariadb_a_server_without_strict_mode_changes_no_value() {
    let db = mariadb();
    runtime().block_on(async {
        let Some(mut c) = db.open().await else {
            return;
        };
        let was = names(c.as_mut(), "SELECT @@GLOBAL.sql_mode").await.concat();
        let _restore = GlobalMode { url: &db.url, was };
        let pid = std::process::id();
        let database = format!("charsets{pid}_loose");
        execute_all(
            c.as_mut(),
            &[
                format!("DROP DATABASE IF EXISTS {database}"),
                format!("CREATE DATABASE {database} CHARACTER SET utf8mb4"),
                "SET GLOBAL sql_mode = ''".into(),
            ],
        )
        .await;
        let url = url_of(&db, &database);
        let mut t = connect_or_skip("mariadb", &url).await.expect("the new database");
        let dir = tempfile::tempdir().expect("temp dir");
        let merge = kv_job(dir.path(), "charset_kv", "charset_wide", "merge");
        for strategy in ["pushdown", "stream"] {
            source(t.as_mut(), "Size", &["L", "☃"]).await;
            execute_all(
                t.as_mut(),
                &[
                    "DROP TABLE IF EXISTS charset_wide".into(),
                    "CREATE TABLE charset_wide (id INT PRIMARY KEY, Size LONGTEXT CHARACTER SET latin1)".into(),
                    "INSERT INTO charset_wide VALUES (1, 'old'), (2, 'old')".into(),
                ],
            )
            .await;
            let out = run_strategy(&merge, strategy, &url);
            assert!(!out.status.success(), "{strategy}: a value was changed to fit: {:?}", hex_cells(t.as_mut(), "charset_wide", "Size").await);
            assert!(stderr(&out).contains("rolled back"), "{strategy}: {}", stderr(&out));
            assert_eq!(
                hex_cells(t.as_mut(), "charset_wide", "Size").await,
                expected_hex(&["old", "old"]),
                "{strategy}: the target as it was"
            );
        }
        drop(t);
        execute_all(c.as_mut(), &[format!("DROP DATABASE {database}")]).await;
    });
}

/// Under `sql_mode = ORACLE` MariaDB's `CONCAT` takes a NULL as `''`: in a `latin1` schema
/// (whose `latin1_swedish_ci` has no `utf8mb4` twin) the table options came out as
/// `DEFAULT CHARSET=utf8mb4 COLLATE=`, and every run failed with `Unknown collation:
/// 'COMMENT'`. The options query, run in a session of that mode, gives the options alone.
#[test]
fn mariadb_table_options_are_whole_under_sql_mode_oracle() {
    use eavpivot::dialect::{MariaDb, Schema};
    use eavpivot::table_ref::TableRef;
    let db = mariadb();
    runtime().block_on(async {
        let Some(mut c) = db.open().await else {
            return;
        };
        let database = format!("charsets{}_oracle", std::process::id());
        execute_all(
            c.as_mut(),
            &[
                format!("DROP DATABASE IF EXISTS {database}"),
                format!("CREATE DATABASE {database} CHARACTER SET latin1"),
            ],
        )
        .await;
        let table = TableRef::parse(&format!("{database}.t")).expect("name");
        let query = MariaDb.created_table_options(&table).expect("a query");
        for mode in ["DEFAULT", "'ORACLE'"] {
            execute_all(c.as_mut(), &[format!("SET SESSION sql_mode = {mode}")]).await;
            let options = names(c.as_mut(), &query).await;
            assert_eq!(options, ["DEFAULT CHARSET=utf8mb4"], "sql_mode {mode}");
        }
        execute_all(c.as_mut(), &[format!("DROP DATABASE {database}")]).await;
    });
}
