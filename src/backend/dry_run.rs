//! What a dry run on a connection with no backend in this build was given: the registry's
//! stand-in ([`super::Driver::dry_run_stand_in`]) records each statement here, and the
//! command prints them before it says why the dry run stopped.

use std::sync::{Arc, Mutex, PoisonError};

/// The statements a dry run's stand-in was given, in order, shared with the command that
/// prints them.
#[derive(Debug, Clone, Default)]
pub struct DryRunLog(Arc<Mutex<Vec<String>>>);

impl DryRunLog {
    pub fn statements(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The statements as the dry run of `job` on driver `name` (its connection `shown`
    /// without password) prints them: the last is the query it stopped at. None when it was
    /// given none.
    pub fn script(&self, job: &str, name: &str, shown: &str) -> Option<String> {
        let mut statements = self.statements();
        let last = statements.pop()?;
        let mut text = format!(
            "-- eavpivot dry run: job {job} on {name} ({shown}), stopped at its first query: no {} backend in this build\n\n",
            capitalized(name),
        );
        for sql in statements {
            text.push_str(&format!("{sql};\n\n"));
        }
        text.push_str(&format!(
            "-- read-only: the run needs this query's answer to plan the rest\n{last};\n"
        ));
        Some(text)
    }

    /// Record one statement the stand-in was given.
    pub fn push(&self, sql: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(sql.to_string());
    }
}

/// `oracle` → `Oracle`: a driver's name as a sentence names its product.
fn capitalized(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_ends_at_the_query_it_stopped_at() {
        let script = |log: &DryRunLog| log.script("j", "oracle", "oracle://u:***@h/svc");
        let log = DryRunLog::default();
        assert_eq!(script(&log), None);
        log.push("ALTER SESSION SET X = 1");
        log.push("SELECT a FROM t");
        assert_eq!(
            script(&log).as_deref(),
            Some(
                "-- eavpivot dry run: job j on oracle (oracle://u:***@h/svc), stopped at its first query: no Oracle backend in this build\n\n\
                 ALTER SESSION SET X = 1;\n\n\
                 -- read-only: the run needs this query's answer to plan the rest\nSELECT a FROM t;\n"
            )
        );
    }
}
