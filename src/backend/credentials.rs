//! Passwords a connection string does not carry: where the string names none,
//! [`fallback_password`] looks in the places the ecosystem's own tools look (see README
//! "Connecting"), in one documented order, and [`prompt_password`] asks a terminal.
//!
//! The connection-string grammars and their redaction live low in the layers
//! ([`crate::secrets`], re-exported here), so the job file's errors hide passwords the same way.

use std::path::{Path, PathBuf};

pub use crate::secrets::{ado_pairs, is_libpq, libpq_pairs};

/// Where a password came from when the connection string had none, in precedence order
/// after `--password-file` and `EAVPIVOT_PASSWORD` (which arrive in `ConnectOptions`).
pub fn fallback_password(env_var: &str) -> Option<String> {
    std::env::var(env_var).ok().filter(|p| !p.is_empty())
}

/// The password `~/.pgpass` (or `PGPASSFILE`) gives for this host, port, database and user:
/// the first line whose fields match, `*` matching anything, `\:` and `\\` escaped.
pub fn pgpass_password(host: &str, port: u16, database: &str, user: &str) -> Option<String> {
    let path = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
    if group_or_world_readable(&path) {
        eprintln!(
            "warning: password file {} has group or world access; it is ignored (chmod 0600 it)",
            path.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    pgpass_lookup(&text, host, port, database, user)
}

/// The password of the first `host:port:db:user:password` line of `text` that matches.
fn pgpass_lookup(text: &str, host: &str, port: u16, database: &str, user: &str) -> Option<String> {
    let port = port.to_string();
    let matches = |field: &str, wanted: &str| field == "*" || field == wanted;
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = pgpass_fields(line);
            let [h, p, d, u, pw] = fields.as_slice() else {
                return None;
            };
            (matches(h, host) && matches(p, &port) && matches(d, database) && matches(u, user))
                .then(|| pw.clone())
        })
}

/// libpq ignores a password file others can read; so does eavpivot.
#[cfg(unix)]
fn group_or_world_readable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o077 != 0)
}

#[cfg(not(unix))]
fn group_or_world_readable(_: &Path) -> bool {
    false
}

fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields
                .last_mut()
                .into_iter()
                .for_each(|f| f.extend(chars.next())),
            ':' => fields.push(String::new()),
            c => fields.last_mut().into_iter().for_each(|f| f.push(c)),
        }
    }
    fields
}

/// Ask on the terminal for the password of `shown`, without echo: only when a person is
/// there (stdin and stderr are terminals, `CI` is unset), never in CI or a pipe.
pub fn prompt_password(shown: &str) -> Option<String> {
    use std::io::IsTerminal;
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive || std::env::var_os("CI").is_some() {
        return None;
    }
    // rpassword turns echo off on the terminal itself (termios / the console API), where the
    // `stty` subprocess this replaces did nothing on Windows.
    let password = rpassword::prompt_password(format!("password for {shown}: ")).ok()?;
    (!password.is_empty()).then_some(password)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_lines_match_with_wildcards_and_escapes() {
        assert_eq!(
            pgpass_fields(r"h:5432:*:u:p\:w\\x"),
            ["h", "5432", "*", "u", r"p:w\x"]
        );
    }
}
