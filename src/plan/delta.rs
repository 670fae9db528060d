//! Whether a merge's delta (`source.changed`) tests nothing but the entity key: then every
//! row of one entity gives it the same answer, so the rows it matches are already whole
//! entities, and the source can be filtered by it directly instead of through
//! "entities with a row matching it" (an `IN`/`EXISTS` that PostgreSQL plans as a scan of
//! the whole source however few entities the delta names: docs/resume.md, session 12).
//!
//! The check is a recogniser, not a parser: it accepts only a small grammar and says no to
//! everything else, so a `changed` it does not understand keeps the general form.
//! Accepted: entity key columns written exactly as the job's `entity:` writes them,
//! constants (numbers, 'strings', NULL, TRUE, FALSE), the comparisons `= <> != < <= > >=`,
//! `BETWEEN`, `IN (…)`, `IS [NOT] NULL`, `AND`, `OR`, `NOT` and parentheses. Refused: any
//! other column, function calls, arithmetic, casts, `LIKE` (MariaDB's ignores the trailing
//! spaces `=` pads), parameters, comments. Whether comparisons with constants respect the
//! engine's equality (no value is converted first) is the dialect's to say
//! ([`crate::dialect::Quoting::constant_comparisons_respect_equality`]).

use crate::table_ref::TableRef;

/// True when `changed` is built only from the `entity` expressions (each a plain, possibly
/// qualified column) and constants, in the grammar above.
pub fn tests_only_entity_keys(changed: &str, entity: &[String]) -> bool {
    let Some(found) = tokens(changed) else {
        return false;
    };
    // The key columns as written; an entity that is an expression is no column to match.
    let keys: Vec<String> = entity
        .iter()
        .filter_map(|e| TableRef::parse(e).ok().map(|column| column.sql()))
        .collect();
    let mut previous: Option<&Token> = None;
    for (i, token) in found.iter().enumerate() {
        let ok = match token {
            Token::Name(parts) => match keyword(parts) {
                Some(_) => true,
                // A column: one of the keys, and not called as a function.
                None => keys.contains(&parts.join(".")) && found.get(i + 1) != Some(&Token::Open),
            },
            // `(` opens a group, or the list of `IN`: never a function's arguments.
            Token::Open => match previous {
                None | Some(Token::Open | Token::Comma | Token::Compare) => true,
                Some(Token::Name(parts)) => matches!(
                    keyword(parts),
                    Some("and" | "or" | "not" | "in" | "between")
                ),
                _ => false,
            },
            Token::Minus => matches!(found.get(i + 1), Some(Token::Number)),
            Token::Close | Token::Comma | Token::Compare | Token::Number | Token::Text => true,
        };
        if !ok {
            return false;
        }
        previous = Some(token);
    }
    true
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// An identifier chain `a.b."C"`, each part as written (quotes included): a key column
    /// must be written exactly as `entity:` writes it, so no engine's case rule is assumed.
    Name(Vec<String>),
    Number,
    Text,
    Open,
    Close,
    Comma,
    Compare,
    Minus,
}

const KEYWORDS: [&str; 10] = [
    "and", "or", "not", "between", "in", "is", "null", "true", "false", "unknown",
];

/// The keyword a one-part unquoted name is, if it is one of the grammar's.
fn keyword(parts: &[String]) -> Option<&'static str> {
    match parts {
        [one] => KEYWORDS
            .iter()
            .copied()
            .find(|k| k.eq_ignore_ascii_case(one)),
        _ => None,
    }
}

/// The tokens of `text`, or None at the first character outside the grammar.
fn tokens(text: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '(' | ')' | ',' => {
                out.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    _ => Token::Comma,
                });
                i += 1;
            }
            '=' => {
                out.push(Token::Compare);
                i += 1;
            }
            '<' | '>' | '!' => {
                let next = chars.get(i + 1).copied();
                let len = match (c, next) {
                    ('<', Some('=' | '>')) | ('>', Some('=')) | ('!', Some('=')) => 2,
                    ('!', _) => return None,
                    _ => 1,
                };
                out.push(Token::Compare);
                i += len;
            }
            '-' => {
                // A negative number only; `--` would start a comment.
                if !chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
                    return None;
                }
                out.push(Token::Minus);
                i += 1;
            }
            '\'' => {
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return None,
                        Some('\'') if chars.get(i + 1) == Some(&'\'') => i += 2,
                        Some('\'') => break,
                        // MariaDB reads a backslash as an escape; PostgreSQL does not.
                        Some('\\') => return None,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
                out.push(Token::Text);
            }
            c if c.is_ascii_digit() => {
                while chars.get(i).is_some_and(|d| d.is_ascii_digit()) {
                    i += 1;
                }
                if chars.get(i) == Some(&'.') {
                    i += 1;
                    while chars.get(i).is_some_and(|d| d.is_ascii_digit()) {
                        i += 1;
                    }
                }
                // `1e5`, `0x1F`, `1abc`: not in the grammar.
                if chars
                    .get(i)
                    .is_some_and(|d| d.is_alphanumeric() || *d == '_')
                {
                    return None;
                }
                out.push(Token::Number);
            }
            _ => {
                let (parts, next) = name(&chars, i)?;
                out.push(Token::Name(parts));
                i = next;
            }
        }
    }
    Some(out)
}

/// The identifier chain starting at `i`, each part as written, and the index after it.
fn name(chars: &[char], mut i: usize) -> Option<(Vec<String>, usize)> {
    let mut parts = Vec::new();
    loop {
        let start = i;
        match chars.get(i)? {
            '"' | '[' | '`' => {
                let close = match chars[i] {
                    '"' => '"',
                    '[' => ']',
                    _ => '`',
                };
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return None,
                        Some(c) if *c == close && chars.get(i + 1) == Some(&close) => i += 2,
                        Some(c) if *c == close => break,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
            }
            c if c.is_alphabetic() || *c == '_' => {
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
            }
            _ => return None,
        }
        parts.push(chars[start..i].iter().collect());
        if chars.get(i) != Some(&'.') {
            return Some((parts, i));
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::tests_only_entity_keys as only;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn entity_ranges_lists_and_constants_are_entity_only() {
        let e = keys(&["s.entity"]);
        for changed in [
            "s.entity >= 100 AND s.entity < 200",
            "(s.entity >= -5) and not (s.entity <> 7)",
            "s.entity BETWEEN 1 AND 2 OR s.entity IN (3, 4.5, 'x''y')",
            "s.entity IS NOT NULL",
            "1 = 1",
            "TRUE",
        ] {
            assert!(only(changed, &e), "{changed}");
        }
        let two = keys(&["s.id", "x.region"]);
        assert!(only("s.id > 5 AND x.region = 'eu'", &two));
        let quoted = keys(&["\"S\".[Entity Id]"]);
        assert!(only("\"S\".[Entity Id] in (1, 2)", &quoted));
    }

    #[test]
    fn anything_else_keeps_the_general_form() {
        let e = keys(&["s.entity"]);
        for changed in [
            "s.modified > 5",                     // another column
            "entity > 5",                         // not written as the job writes it
            "S.Entity > 5",                       // nor this (a column of its own somewhere)
            "\"s\".\"entity\" > 5",               // nor this
            "s.entity + 1 > 5",                   // arithmetic
            "lower(s.entity) = 'a'",              // a function
            "s.entity LIKE 'a%'",                 // LIKE
            "s.entity::int > 5",                  // a cast
            "CAST(s.entity AS int) > 5",          // a cast
            "s.entity > 5 -- comment",            // a comment
            "s.entity > 5 /* c */",               // a comment
            "s.entity = 'a\\'",                   // a backslash
            "s.entity > random()",                // volatile
            "s.entity > (SELECT MAX(id) FROM t)", // a subquery
            "s.entity IN (SELECT id FROM t)",     // a subquery
            "s.entity > 1e5",                     // a number form outside the grammar
            "s.entity > ?",                       // a parameter
            "s.entity > $1",                      // a parameter
            "s.entity = 'unterminated",           // malformed
            "s.entity > current_date",            // not a key column
            "s.entity > 5; DROP TABLE t",         // another statement
        ] {
            assert!(!only(changed, &e), "{changed}");
        }
        // An entity that is an expression is never matched.
        assert!(!only("s.a > 1", &keys(&["s.a || s.b"])));
        assert!(!only("lower(s.a) = 'x'", &keys(&["lower(s.a)"])));
    }
}
