//! Secrets in connection strings: parsed out by the same grammar each driver uses, never by
//! splitting on `;` or `:`, so a password with quotes, `;`, `@` or `%` escapes is found whole.
//!
//! Three grammars cover every form eavpivot accepts: URLs (`postgres://`, `mysql://`,
//! `mssql://`), `key=value;…` strings (ADO.NET, and JDBC after its `jdbc:sqlserver://host`
//! head) with `"…"`, `'…'` and `{…}` quoting, and libpq's `key=value key='v a l'` strings.
//! [`redact`] shows a string with every secret replaced by `***`; a string none of the
//! grammars can read is not shown at all, because a parser that failed cannot say where the
//! password was.
//!
//! Low in the layers (it imports nothing of the crate but [`crate::display`]), so the job
//! file's errors and the drivers hide passwords with the same grammars.

use url::Url;

/// Keys whose value is secret, in any of the three grammars.
pub fn is_secret_key(key: &str) -> bool {
    let key = key.trim().to_ascii_lowercase();
    key == "pwd" || key == "pass" || key.contains("password")
}

/// What replaces every secret.
const HIDDEN: &str = "***";

/// `text` with every password replaced by `***`; `None` when no grammar reads it.
pub fn redact(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if let Some(rest) = strip_prefix_ci(trimmed, "jdbc:") {
        let (head, props) = rest.split_once(';').unwrap_or((rest, ""));
        let head = redact_url(head)?;
        let props = redact_pairs(props)?;
        return Some(if props.is_empty() {
            format!("jdbc:{head}")
        } else {
            format!("jdbc:{head};{props}")
        });
    }
    if trimmed.contains("://") {
        return redact_url(trimmed);
    }
    if is_libpq(trimmed) {
        let pairs = libpq_pairs(trimmed)?;
        return Some(
            pairs
                .iter()
                .map(|(k, raw, _)| format!("{k}={}", shown_value(k, raw)))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    redact_pairs(trimmed)
}

/// Whether `text` may be a connection string (and so may hold a password): a URL, or
/// `key=value` pairs of any of the three grammars.
pub fn may_be_connection_string(text: &str) -> bool {
    text.contains("://") || text.contains('=')
}

/// A value from the operator (a job-file scalar, a table name) as an error message may quote
/// it: in quotes and cut like [`crate::display::shown`], or, when it may be a connection
/// string, with every password hidden (or not at all, when no grammar reads it).
pub fn shown_redacted(text: &str) -> String {
    if may_be_connection_string(text) {
        format!("'{}'", redact_or_kind(text))
    } else {
        crate::display::shown(text)
    }
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// A URL's password (userinfo or any secret query parameter) replaced.
fn redact_url(text: &str) -> Option<String> {
    let mut url = Url::parse(text).ok()?;
    // A raw `#` in a password starts a fragment: whatever follows it is secret too.
    if url.fragment().is_some() {
        url.set_fragment(Some(HIDDEN));
    }
    if url.password().is_some() {
        url.set_password(Some(HIDDEN)).ok()?;
    }
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let v = if is_secret_key(&k) {
                    HIDDEN.to_string()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    // `set_password` percent-encodes nothing in `***`, but `query_pairs_mut` writes `%2A`.
    Some(url.to_string().replace("%2A%2A%2A", HIDDEN))
}

/// A `key=value;…` string with secret values replaced; other values as written.
fn redact_pairs(text: &str) -> Option<String> {
    Some(
        ado_pairs(text)?
            .iter()
            .map(|(k, raw, _)| format!("{k}={}", shown_value(k, raw)))
            .collect::<Vec<_>>()
            .join(";"),
    )
}

/// True for libpq's `host=… dbname=…` form: the first key is one of libpq's and the whole
/// string reads as libpq pairs (ADO.NET keys such as `Server` never start one).
pub fn is_libpq(text: &str) -> bool {
    let text = text.trim();
    let first_key = text
        .split('=')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    !text.contains("://")
        && matches!(
            first_key.as_str(),
            "host" | "hostaddr" | "port" | "dbname" | "user" | "password" | "sslmode" | "service"
        )
        && libpq_pairs(text).is_some_and(|pairs| pairs.len() > 1 || !text.contains(';'))
}

/// A value as it may be shown: secret keys' values, and any value holding `=` (a sign the
/// grammar was wrong about where pairs end, so it may hide a `password=`), become `***`.
fn shown_value<'a>(key: &str, raw: &'a str) -> &'a str {
    if is_secret_key(key) || raw.contains('=') {
        HIDDEN
    } else {
        raw
    }
}

/// `(key, value as written, value)` of an ADO.NET / JDBC property list. Values may be quoted
/// with `"…"` or `'…'` (the quote doubled inside) or `{…}` (`}}` inside); unquoted values run
/// to the next `;`. `None` for an unterminated quote: the caller must then show nothing.
pub fn ado_pairs(text: &str) -> Option<Vec<(String, String, String)>> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| c == ';' || c.is_whitespace());
        if rest.is_empty() {
            return Some(out);
        }
        let eq = rest.find('=');
        let semi = rest.find(';');
        let Some(eq) = eq.filter(|eq| semi.is_none_or(|s| *eq < s)) else {
            // A part without `=`: not a pair; skip it as the drivers do.
            rest = &rest[semi.unwrap_or(rest.len())..];
            continue;
        };
        let key = rest[..eq].trim().to_string();
        let after = rest[eq + 1..].trim_start();
        let (value, used) = match after.chars().next() {
            Some(q @ ('"' | '\'' | '{')) => {
                let close = if q == '{' { '}' } else { q };
                quoted(&after[1..], close).map(|(v, n)| (v, n + 1))?
            }
            _ => {
                let end = after.find(';').unwrap_or(after.len());
                (after[..end].trim_end().to_string(), end)
            }
        };
        out.push((key, after[..used].trim_end().to_string(), value));
        rest = &after[used..];
    }
}

/// The value up to `close` (doubled `close` stands for one), and the bytes used including it.
fn quoted(text: &str, close: char) -> Option<(String, usize)> {
    let mut value = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == close {
            if chars.peek().is_some_and(|(_, n)| *n == close) {
                chars.next();
                value.push(c);
                continue;
            }
            return Some((value, i + c.len_utf8()));
        }
        value.push(c);
    }
    None
}

/// `(key, value as written, value)` of a libpq `key=value` string: values are unquoted up to
/// whitespace, or `'…'` with `\'` and `\\` escapes.
pub fn libpq_pairs(text: &str) -> Option<Vec<(String, String, String)>> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let eq = rest.find('=')?;
        let key = rest[..eq].trim().to_string();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return None;
        }
        let after = rest[eq + 1..].trim_start();
        let mut value = String::new();
        let mut used = after.len();
        let mut chars = after.char_indices();
        let quote = after.starts_with('\'');
        if quote {
            chars.next();
        }
        let mut closed = !quote;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => value.extend(chars.next().map(|(_, n)| n)),
                '\'' if quote => {
                    used = i + 1;
                    closed = true;
                    break;
                }
                c if !quote && c.is_whitespace() => {
                    used = i;
                    break;
                }
                c => value.push(c),
            }
        }
        if !closed {
            return None;
        }
        out.push((key, after[..used].to_string(), value));
        rest = after[used..].trim_start();
    }
    Some(out)
}

/// The connection as it may be shown: every password `***`, or only its kind when it cannot
/// be parsed (a parser that failed cannot say where the password was).
pub fn redact_or_kind(text: &str) -> String {
    redact(text).unwrap_or_else(|| {
        let kind = text
            .split_once("://")
            .map(|(scheme, _)| scheme)
            .filter(|s| s.len() <= 20 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == ':'))
            .unwrap_or("connection string");
        format!("{kind} (not shown: it does not parse, so its password cannot be hidden)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_ado_passwords_are_hidden_whole() {
        for text in [
            r#"Server=h;User Id=sa;password="se;cret;pw";Database=d"#,
            "Server=h;Password='se;cret''s';Database=d",
            "Server=h;Password={se;cret}}pw};Database=d",
        ] {
            let shown = redact(text).unwrap();
            assert!(!shown.contains("cret"), "{shown}");
            assert!(shown.contains("Database=d"), "{shown}");
        }
        let pairs = ado_pairs(r#"a=1;password="x;""y";b=2"#).unwrap();
        assert_eq!(pairs[1].2, r#"x;"y"#);
        assert!(redact("Server=h;Password=\"open").is_none());
    }

    #[test]
    fn urls_jdbc_and_libpq_are_hidden() {
        let cases = [
            (
                "postgres://me:p%40ss@db:5432/x",
                "postgres://me:***@db:5432/x",
            ),
            (
                "mssql://sa@h:1433/db?password=s3&trust_cert=true",
                "mssql://sa@h:1433/db?password=***&trust_cert=true",
            ),
            (
                "jdbc:sqlserver://h:1433;databaseName=d;password={a;b}",
                "jdbc:sqlserver://h:1433;databaseName=d;password=***",
            ),
            (
                "host=h dbname=d password='a b\\'c' user=u",
                "host=h dbname=d password=*** user=u",
            ),
        ];
        for (given, shown) in cases {
            assert_eq!(redact(given).unwrap(), shown);
        }
    }
}
