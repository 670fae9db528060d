//! A server's legacy settings change no name or value eavpivot writes. PostgreSQL with
//! `standard_conforming_strings = off` (a database or role set so by an old application) reads
//! a backslash in `'…'` as an escape: the pushdown's `CASE WHEN attr = 'back\slash'` matched
//! nothing, so the run failed its verification. Through the real binary, both strategies, a
//! replace and then a merge; cells read back as the source holds them.

use crate::servers;

use servers::*;

#[test]
fn postgres_standard_conforming_strings_off_changes_no_name_or_value() {
    runtime().block_on(async {
        let setup = ["DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET standard_conforming_strings = off', current_database()); END $$"];
        let Some((_scratch, db)) = ScratchDatabase::create("scsoff", &setup).await else {
            return;
        };
        let mut conn = db.open().await.expect("the scratch database");
        let c = conn.as_mut();
        // A new session, as eavpivot's are: the setting is in force (the test is not vacuous).
        let setting = text_rows(c, "SHOW standard_conforming_strings").await;
        assert_eq!(setting, [["off"]]);
        let dir = tempfile::tempdir().expect("temp dir");
        let replace = kv_job(dir.path(), "kv", "kv_wide", "replace");
        let merge = kv_job(dir.path(), "kv", "kv_wide", "merge");
        let read = "SELECT id::text, \"back\\slash\", \"it's\" FROM kv_wide ORDER BY id";
        for strategy in ["pushdown", "stream"] {
            // E'' literals: the same under either setting.
            execute_all(
                c,
                &[
                    "DROP TABLE IF EXISTS kv, kv_wide".into(),
                    "CREATE TABLE kv (id INT, attr TEXT, val TEXT)".into(),
                    "INSERT INTO kv VALUES (1, E'back\\\\slash', E'x\\\\y'), (1, E'it''s', E'a\\\\''b'), (2, E'it''s', 'p')".into(),
                ],
            )
            .await;
            let out = run_strategy(&replace, strategy, &db.url);
            assert!(out.status.success(), "{strategy} replace: {}", stderr(&out));
            let want = [["1", "x\\y", "a\\'b"], ["2", "", "p"]];
            assert_eq!(text_rows(c, read).await, want, "{strategy} replace");
            execute_all(c, &["INSERT INTO kv VALUES (2, E'back\\\\slash', E'\\\\\\\\')".into()]).await;
            let out = run_strategy(&merge, strategy, &db.url);
            assert!(out.status.success(), "{strategy} merge: {}", stderr(&out));
            let want = [["1", "x\\y", "a\\'b"], ["2", "\\\\", "p"]];
            assert_eq!(text_rows(c, read).await, want, "{strategy} merge");
        }
    });
}
