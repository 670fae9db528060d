//! Column types across databases: a source's declared entity type read in one dialect and
//! written in another (`target.connection`). A declared type is parsed into a [`Portable`]
//! kind, and the target dialect spells that kind ([`super::Dialect::spell`]); where the
//! target cannot hold the values exactly, or holds more, the mapping says so in a note.

use super::Dialect;

/// A declared type, as much of it as a move between databases needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Portable {
    SmallInt,
    Int,
    BigInt,
    /// Text of at most this many characters; None = unbounded.
    Text(Option<u32>),
    /// Fixed-width text (`CHAR(n)`), padded by the source.
    FixedText(u32),
    Decimal(u32, u32),
    Float,
    Boolean,
    Date,
    Timestamp,
    Uuid,
}

/// The kind of a declared type (`VARCHAR(50)`, `int4`, `NVARCHAR(MAX)`, `numeric(10,2)`),
/// or None for a type without a portable equivalent.
pub fn parse(declared: &str) -> Option<Portable> {
    let lower = declared.trim().to_ascii_lowercase();
    let (base, args) = match lower.find('(') {
        Some(open) => (
            lower[..open].trim(),
            lower[open + 1..].trim_end_matches(')').trim(),
        ),
        None => (lower.as_str(), ""),
    };
    let base = base.trim_end_matches(" unsigned").trim();
    let nums: Vec<u32> = args
        .split(',')
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    let first = nums.first().copied();
    Some(match base {
        "tinyint" | "smallint" | "int2" => Portable::SmallInt,
        "mediumint" | "int" | "integer" | "int4" | "serial" => Portable::Int,
        "bigint" | "int8" | "bigserial" => Portable::BigInt,
        "varchar" | "nvarchar" | "character varying" | "varchar2" | "nvarchar2" => {
            Portable::Text(first)
        }
        "text" | "longtext" | "mediumtext" | "ntext" | "clob" | "string" => Portable::Text(None),
        "char" | "nchar" | "character" | "bpchar" => Portable::FixedText(first.unwrap_or(1)),
        "decimal" | "numeric" | "number" | "money" => {
            Portable::Decimal(first.unwrap_or(38), nums.get(1).copied().unwrap_or(0))
        }
        "float" | "double" | "double precision" | "real" | "float4" | "float8" => Portable::Float,
        "boolean" | "bool" | "bit" => Portable::Boolean,
        "date" => Portable::Date,
        "timestamp"
        | "timestamp without time zone"
        | "datetime"
        | "datetime2"
        | "smalldatetime" => Portable::Timestamp,
        "uuid" | "uniqueidentifier" => Portable::Uuid,
        _ => return None,
    })
}

/// `declared` (a source type in `from`'s spelling) as `to` spells it, with a note where the
/// move is lossy or widens.
pub fn map(from: &dyn Dialect, to: &dyn Dialect, declared: &str) -> (String, Option<String>) {
    let Some(kind) = from.portable_type(declared) else {
        return (
            to.text_type().to_string(),
            Some(format!(
                "{} type {declared} has no equivalent on {}: written as {}",
                from.name(),
                to.name(),
                to.text_type()
            )),
        );
    };
    let (spelled, caveat) = to.spell(kind);
    let note = caveat.map(|why| {
        format!(
            "{} type {declared} is {spelled} on {}: {why}",
            from.name(),
            to.name()
        )
    });
    (spelled, note)
}

/// The standard SQL spelling (PostgreSQL's); dialects override what differs.
pub fn standard(kind: Portable) -> (String, Option<&'static str>) {
    let name = match kind {
        Portable::SmallInt => "SMALLINT".to_string(),
        Portable::Int => "INT".to_string(),
        Portable::BigInt => "BIGINT".to_string(),
        Portable::Text(Some(n)) => format!("VARCHAR({n})"),
        Portable::Text(None) => "TEXT".to_string(),
        Portable::FixedText(n) => format!("CHAR({n})"),
        Portable::Decimal(p, s) => format!("DECIMAL({p},{s})"),
        Portable::Float => "DOUBLE PRECISION".to_string(),
        Portable::Boolean => "BOOLEAN".to_string(),
        Portable::Date => "DATE".to_string(),
        Portable::Timestamp => "TIMESTAMP".to_string(),
        Portable::Uuid => "UUID".to_string(),
    };
    (name, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{MariaDb, MsSql, Postgres, Sqlite};

    #[test]
    fn declared_types_parse_into_kinds() {
        assert_eq!(parse("VARCHAR(50)"), Some(Portable::Text(Some(50))));
        assert_eq!(parse("NVARCHAR(MAX)"), Some(Portable::Text(None)));
        assert_eq!(parse("int4"), Some(Portable::Int));
        assert_eq!(parse("numeric(10, 2)"), Some(Portable::Decimal(10, 2)));
        assert_eq!(parse("INT UNSIGNED"), Some(Portable::Int));
        assert_eq!(parse("geometry"), None);
    }

    #[test]
    fn each_target_spells_the_kind_and_says_what_is_lost() {
        assert_eq!(
            map(&Postgres, &MsSql, "varchar(50)"),
            ("NVARCHAR(50)".into(), None)
        );
        assert_eq!(map(&MariaDb, &Postgres, "int(11)"), ("INT".into(), None));
        // SQLite's INTEGER holds 64 bits, PostgreSQL's 32.
        assert_eq!(map(&Sqlite, &MariaDb, "INTEGER"), ("BIGINT".into(), None));
        assert_eq!(map(&Postgres, &MariaDb, "integer"), ("INT".into(), None));
        let (ty, note) = map(&Postgres, &Sqlite, "numeric(30,10)");
        assert_eq!(ty, "NUMERIC(30,10)");
        assert!(note.is_some_and(|n| n.contains("numeric(30,10)")));
        let (ty, note) = map(&Postgres, &MariaDb, "geometry");
        assert_eq!(ty, "LONGTEXT");
        assert!(note.is_some_and(|n| n.contains("no equivalent")));
    }
}
