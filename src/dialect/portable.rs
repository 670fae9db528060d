//! Entity key types across databases (`target.connection`): a source's declared type, read in
//! the source's terms ([`super::Types::portable_type`]), becomes the [`ColumnKind`] typed
//! pivot columns use, and the target spells it as it spells those
//! ([`super::Types::column_sql_type`]): one model of column types, not two. Where the target
//! cannot hold the kind exactly, or holds more, the mapping says so in a note.

use super::typed::ColumnKind;
use super::Dialect;

/// Whether a column of this declared type may hold text: a text kind, or a type without a
/// portable kind (`citext`, an enum, a domain) or not said at all (None), which may.
pub fn may_hold_text(declared: Option<&str>) -> bool {
    declared.and_then(parse).is_none_or(|kind| kind.is_text())
}

/// Whether a declared type is variable-length character text with a length (`VARCHAR(5)`,
/// `NVARCHAR(5)`, `character varying(5)`, `sysname`): what a value keeps as written, up to its
/// length. Not fixed-length `CHAR(5)` (pads), nor `uuid` (text only in its own form).
pub fn is_varying_text(declared: &str) -> bool {
    let lower = declared.trim().to_ascii_lowercase();
    let varying = matches!(
        split(&lower).0,
        "sysname" | "varchar" | "nvarchar" | "character varying" | "varchar2" | "nvarchar2"
    );
    varying && matches!(parse(declared), Some(ColumnKind::Text { .. }))
}

/// A declared type's name without its arguments, lower-cased: `DATETIME2(7)` → `datetime2`.
pub fn base_name(declared: &str) -> String {
    split(&declared.trim().to_ascii_lowercase()).0.to_string()
}

/// A lower-cased declared type's name and its arguments: `varchar(5)` → (`varchar`, `5`).
fn split(lower: &str) -> (&str, &str) {
    match lower.find('(') {
        Some(open) => (
            lower[..open].trim(),
            lower[open + 1..].trim_end_matches(')').trim(),
        ),
        None => (lower, ""),
    }
}

/// The kind of a declared type (`VARCHAR(50)`, `int4`, `NVARCHAR(MAX)`, `numeric(10,2)`) in
/// standard terms, or None for a type without a portable equivalent.
pub fn parse(declared: &str) -> Option<ColumnKind> {
    let lower = declared.trim().to_ascii_lowercase();
    let (base, args) = split(&lower);
    let base = base.trim_end_matches(" unsigned").trim();
    let nums: Vec<u32> = args
        .split(',')
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    let text = |n: u32| ColumnKind::Text {
        chars: u64::from(n),
        utf16: 2 * u64::from(n),
        bytes: 4 * u64::from(n),
    };
    Some(match base {
        "tinyint" | "smallint" | "int2" => ColumnKind::SmallInt,
        "mediumint" | "int" | "integer" | "int4" | "serial" => ColumnKind::Int,
        "bigint" | "int8" | "bigserial" => ColumnKind::BigInt,
        "varchar" | "nvarchar" | "character varying" | "varchar2" | "nvarchar2" | "char"
        | "nchar" | "character" | "bpchar" => match nums.first() {
            Some(&n) => text(n),
            None if base.contains("char") && !base.contains("var") => text(1),
            None => ColumnKind::UnboundedText,
        },
        // SQL Server's name type, NVARCHAR(128) (Babelfish lists it by its own name).
        "sysname" => text(128),
        "text" | "longtext" | "mediumtext" | "ntext" | "clob" | "string" => {
            ColumnKind::UnboundedText
        }
        "decimal" | "numeric" | "number" => ColumnKind::Decimal {
            precision: nums.first().copied().unwrap_or(38),
            scale: nums.get(1).copied().unwrap_or(0),
        },
        "float" | "double" | "double precision" | "real" | "float4" | "float8" => ColumnKind::Float,
        "boolean" | "bool" | "bit" => ColumnKind::Boolean,
        "date" => ColumnKind::Date,
        "timestamp"
        | "timestamp without time zone"
        | "datetime"
        | "datetime2"
        | "smalldatetime" => ColumnKind::Timestamp {
            fraction: nums.first().copied().unwrap_or(6).min(6),
        },
        "uuid" | "uniqueidentifier" => text(36),
        _ => return None,
    })
}

/// `declared` (a source type in `from`'s spelling) as `to` spells it, with a note where the
/// move loses or widens.
pub fn map(from: &dyn Dialect, to: &dyn Dialect, declared: &str) -> (String, Option<String>) {
    let note = |spelled: &str, why: &str| {
        Some(format!(
            "{} type {declared} is {spelled} on {}: {why}",
            from.name(),
            to.name()
        ))
    };
    let Some(kind) = from.portable_type(declared) else {
        let spelled = to.text_type().to_string();
        let why = note(&spelled, "it has no equivalent there");
        return (spelled, why);
    };
    let spelled = to.column_sql_type(&kind);
    let why = match &kind {
        ColumnKind::UnboundedText => None,
        ColumnKind::Text { .. } if spelled == to.text_type() => {
            note(&spelled, "widened to unbounded text")
        }
        ColumnKind::Text { .. } => None,
        _ if spelled == to.text_type() => note(&spelled, "no exact equivalent, held as text"),
        _ => None,
    };
    (spelled, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{MariaDb, MsSql, Postgres, Sqlite};

    #[test]
    fn varying_text_is_bounded_variable_length_character_text() {
        for t in [
            "VARCHAR(5)",
            "nvarchar(10)",
            "character varying(5)",
            "sysname",
        ] {
            assert!(is_varying_text(t), "{t}");
        }
        for t in [
            "CHAR(5)",
            "nchar(5)",
            "bpchar",
            "uuid",
            "uniqueidentifier",
            "text",
            "nvarchar(max)",
            "VARCHAR",
            "int",
        ] {
            assert!(!is_varying_text(t), "{t}");
        }
    }

    #[test]
    fn declared_types_parse_into_kinds() {
        assert!(matches!(
            parse("VARCHAR(50)"),
            Some(ColumnKind::Text { chars: 50, .. })
        ));
        assert_eq!(parse("NVARCHAR(MAX)"), Some(ColumnKind::UnboundedText));
        assert_eq!(parse("int4"), Some(ColumnKind::Int));
        assert_eq!(
            parse("numeric(10, 2)"),
            Some(ColumnKind::Decimal {
                precision: 10,
                scale: 2
            })
        );
        assert_eq!(parse("INT UNSIGNED"), Some(ColumnKind::Int));
        assert_eq!(parse("geometry"), None);
    }

    #[test]
    fn each_target_spells_the_kind_and_says_what_is_lost() {
        assert_eq!(
            map(&Postgres, &MsSql, "varchar(50)"),
            ("NVARCHAR(100)".into(), None)
        );
        assert_eq!(map(&MariaDb, &MsSql, "int(11)"), ("INT".into(), None));
        // SQLite's INTEGER holds 64 bits, PostgreSQL's 32.
        assert_eq!(map(&Sqlite, &MariaDb, "INTEGER"), ("BIGINT".into(), None));
        assert_eq!(map(&Postgres, &MariaDb, "integer"), ("INT".into(), None));
        assert_eq!(
            map(&MsSql, &MariaDb, "varchar(20)"),
            ("VARCHAR(20)".into(), None)
        );
        let (ty, note) = map(&Postgres, &MariaDb, "geometry");
        assert_eq!(ty, "LONGTEXT");
        assert!(note.is_some_and(|n| n.contains("no equivalent")));
        let (ty, note) = map(&MariaDb, &Postgres, "varchar(20)");
        assert_eq!(ty, "text");
        assert!(note.is_some_and(|n| n.contains("widened")));
    }
}
