//! Table names written by the operator (`ITEM_DETAIL`, `dbo.ITEM_DETAIL`, `[My Table]`).
//!
//! They are operator SQL, not data: they are written into statements as given, so that
//! `ITEM_WIDE` means in eavpivot exactly what it means in the operator's own queries (folded
//! to lower case by PostgreSQL, case-insensitive on SQL Server). Because they are pasted
//! verbatim, they are held to a strict shape: dotted parts, each a plain identifier or one
//! quoted with `"…"`, `[…]` or `` `…` `` that contains no quote character of its own.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRef {
    parts: Vec<String>,
}

impl TableRef {
    pub fn parse(text: &str) -> Result<TableRef, String> {
        let text = text.trim();
        // A connection string pasted here may hold a password: never echoed whole.
        let shown = || crate::secrets::shown_redacted(text);
        let mut parts = Vec::new();
        let mut rest = text;
        loop {
            let (part, after) = split_part(rest).ok_or_else(|| {
                format!(
                    "{} is not a table name: use identifiers separated by dots, \
                     quoted with \"\", [] or `` if they contain other characters",
                    shown()
                )
            })?;
            parts.push(part.to_string());
            match after.strip_prefix('.') {
                Some(next) => rest = next,
                None if after.is_empty() => break,
                None => return Err(format!("{} is not a table name", shown())),
            }
        }
        if parts.len() > 3 {
            return Err(format!("{} has more than three parts", shown()));
        }
        Ok(TableRef { parts })
    }

    /// The SQL text, exactly as written.
    pub fn sql(&self) -> String {
        self.parts.join(".")
    }

    /// The last part as written, quotes kept: what `RENAME TO` takes.
    pub fn last_part(&self) -> &str {
        self.parts.last().map(String::as_str).unwrap_or_default()
    }

    /// The last part without its quotes: the table's own name.
    pub fn name(&self) -> String {
        unquote(self.parts.last().map(String::as_str).unwrap_or_default())
    }

    /// The schema part without quotes, when one was written.
    pub fn schema(&self) -> Option<String> {
        (self.parts.len() >= 2).then(|| unquote(&self.parts[self.parts.len() - 2]))
    }

    /// The database part (of `db.schema.table`) without quotes, when one was written.
    pub fn database(&self) -> Option<String> {
        (self.parts.len() == 3).then(|| unquote(&self.parts[0]))
    }

    /// A sibling table in the same schema: `dbo.ITEM_WIDE` + `_2` = `dbo.ITEM_WIDE_2`,
    /// keeping the quoting style of the last part.
    pub fn with_suffix(&self, suffix: &str) -> TableRef {
        let mut parts = self.parts.clone();
        if let Some(last) = parts.last_mut() {
            *last = match last.chars().last() {
                Some(close @ ('"' | ']' | '`')) => {
                    format!("{}{suffix}{close}", &last[..last.len() - 1])
                }
                _ => format!("{last}{suffix}"),
            };
        }
        TableRef { parts }
    }
}

impl TableRef {
    /// The same table with its own name cut to the first `keep` characters, quoting kept:
    /// the base of a derived name that must fit an identifier limit.
    pub fn with_name_cut(&self, keep: usize) -> TableRef {
        let mut parts = self.parts.clone();
        if let Some(last) = parts.last_mut() {
            let quoted = matches!(last.chars().next(), Some('"' | '[' | '`'));
            let inner: String = unquote(last).chars().take(keep).collect();
            *last = match (quoted, last.chars().last()) {
                (true, Some(close)) => format!("{}{inner}{close}", &last[..1]),
                _ => inner,
            };
        }
        TableRef { parts }
    }
}

impl fmt::Display for TableRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sql())
    }
}

/// Split one identifier off the front of `text`: returns (identifier as written, rest).
fn split_part(text: &str) -> Option<(&str, &str)> {
    let close = match text.chars().next()? {
        '"' => '"',
        '[' => ']',
        '`' => '`',
        _ => {
            let end = text.find('.').unwrap_or(text.len());
            let part = &text[..end];
            return is_plain_identifier(part).then(|| (part, &text[end..]));
        }
    };
    let end = text[1..].find(close)? + 1;
    let inner = &text[1..end];
    let bad = ['"', '[', ']', '`'];
    if inner.is_empty() || inner.contains(bad) {
        return None;
    }
    Some((&text[..=end], &text[end + 1..]))
}

pub fn is_plain_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

fn unquote(part: &str) -> String {
    match part.chars().next() {
        Some('"' | '[' | '`') => part[1..part.len() - 1].to_string(),
        _ => part.to_string(),
    }
}

/// The column name an entity expression like `ID.ITEM_ID` or `[ITEM ID]` yields, if it is a
/// (possibly qualified) column reference rather than a computed expression.
pub fn column_name_of(expr: &str) -> Option<String> {
    TableRef::parse(expr).ok().map(|t| t.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_quoted_parts() {
        assert_eq!(
            TableRef::parse("dbo.ITEM_DETAIL").unwrap().sql(),
            "dbo.ITEM_DETAIL"
        );
        let quoted = TableRef::parse("[my schema].\"Item Wide\"").unwrap();
        assert_eq!(quoted.name(), "Item Wide");
        assert_eq!(quoted.schema().as_deref(), Some("my schema"));
    }

    #[test]
    fn rejects_anything_that_could_smuggle_sql() {
        for bad in [
            "t; DROP TABLE x",
            "a b",
            "[a]]b]",
            "\"a\"\"b\"",
            "",
            "a..b",
            "1abc",
            "t--",
        ] {
            assert!(TableRef::parse(bad).is_err(), "{bad} must be rejected");
        }
    }

    #[test]
    fn suffix_keeps_the_quoting_style() {
        let plain = TableRef::parse("dbo.ITEM_WIDE").unwrap();
        assert_eq!(plain.with_suffix("_2").sql(), "dbo.ITEM_WIDE_2");
        let quoted = TableRef::parse("[Item Wide]").unwrap();
        assert_eq!(quoted.with_suffix("_2").sql(), "[Item Wide_2]");
    }

    #[test]
    fn entity_column_names() {
        assert_eq!(column_name_of("ID.ITEM_ID").as_deref(), Some("ITEM_ID"));
        assert_eq!(column_name_of("[ITEM ID]").as_deref(), Some("ITEM ID"));
        assert_eq!(column_name_of("COALESCE(a, b)"), None);
    }
}
