//! The numeric value column (`gen::Case::values`, families `numeric_values` and
//! `float_values`): which text each database holds for a source value declared `DECIMAL(12,4)`
//! or a double, and by which order a conflict is resolved. Part of the model: written from the guide ("Conflicting values of a decimal
//! type (`NUMERIC`, `DECIMAL`) are compared by value in both: `10.5` beats `9`"; "A
//! floating-point value in a SQLite TEXT column is its exact text … from a SQLite source or
//! any other"; "floating-point source values become the dialect's double") and the databases'
//! own conversions, never from `src/`.
//!
//! The text a cell gets is the source database's text of the stored number, whatever the
//! target: the stream reads that number and writes it, the pushdown converts it in the one
//! database. A typed target column (`infer`) is compared by value, as for text sources.

use std::cmp::Ordering;

use super::model::{decimal_parts, Row};

/// The type of the case's value column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Text,
    /// DECIMAL(12,4) (SQLite: NUMERIC affinity); family `numeric_values`.
    Decimal,
    /// A double: PostgreSQL `double precision`, MariaDB `DOUBLE`, SQL Server `FLOAT`, SQLite
    /// `REAL`; family `float_values`. Every value has few digits, so each database's shortest
    /// text of it is the same numeral (`27.8`, `0.001`, `3000000000`): only SQLite's layout of
    /// a whole number differs (`5.0`).
    Double,
}

impl Column {
    /// The column's type on `engine` (`postgres`, `mariadb`, `mssql`, `sqlite`), or None for
    /// a text column.
    pub fn sql_type(self, engine: &str) -> Option<&'static str> {
        Some(match (self, engine) {
            (Column::Text, _) => return None,
            (Column::Decimal, _) => "DECIMAL(12,4)",
            (Column::Double, "postgres") => "DOUBLE PRECISION",
            (Column::Double, "mssql") => "FLOAT",
            (Column::Double, "sqlite") => "REAL",
            (Column::Double, _) => "DOUBLE",
        })
    }
}

/// How the source's value column holds a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// A text column: every value as the source wrote it, conflicts by bytes.
    Text,
    /// PostgreSQL `numeric(12,4)`, MariaDB and SQL Server `DECIMAL(12,4)`: the number with the
    /// type's four decimals (`27.8000`, `-3.1250`, `5.0000`).
    Scale4,
    /// SQLite's NUMERIC affinity: a whole number is an INTEGER (`5`), any other a REAL whose
    /// text is the shortest that reads back as the same double (`27.8`, `0.4`).
    SqliteNumber,
    /// A double, as the guide says it reaches a text column: the target database's text of
    /// it, the same by both strategies — SQLite's layout in a SQLite target (`5.0`, `27.8`:
    /// "values SQLite prints exactly keep its spelling"), elsewhere the shortest numeral that
    /// reads back as the double (PostgreSQL's `float8out`, MariaDB's, eavpivot's: `5`).
    /// `mssql_source`: SQL Server converts a FLOAT to text with 6 digits, so a forced
    /// pushdown is refused (exit 2) and `auto` streams.
    Double {
        sqlite_target: bool,
        mssql_source: bool,
    },
}

/// How the source on `source_leg` holds values, as written into `target_leg`.
pub fn values(column: Column, source_leg: &str, target_leg: &str) -> Values {
    match (column, source_leg) {
        (Column::Text, _) => Values::Text,
        (Column::Decimal, "sqlite") => Values::SqliteNumber,
        (Column::Decimal, _) => Values::Scale4,
        (Column::Double, _) => Values::Double {
            sqlite_target: target_leg == "sqlite",
            mssql_source: source_leg == "mssql",
        },
    }
}

impl Values {
    /// Whether conflicts are resolved by the number (else by the source text's bytes).
    pub fn by_value(self) -> bool {
        self != Values::Text
    }

    /// The text of `v` (a decimal numeral that fits DECIMAL(12,4)) as the source holds it.
    pub fn stored(self, v: &str) -> String {
        match self {
            Values::Text => v.to_string(),
            Values::Scale4 => {
                let (int, frac) = decimal_parts(v)
                    .unwrap_or_else(|| panic!("numeric value {v:?} is not a decimal numeral"));
                assert!(
                    frac.len() <= 4,
                    "numeric value {v:?} has more than 4 decimals"
                );
                let sign = if v.starts_with('-') { "-" } else { "" };
                format!("{sign}{int}.{frac:0<4}")
            }
            Values::Double { sqlite_target, .. } => {
                let x = number(v);
                match sqlite_target && x.fract() == 0.0 {
                    true => format!("{x:.1}"),
                    false => format!("{x}"),
                }
            }
            Values::SqliteNumber => {
                let x = number(v);
                // NUMERIC affinity keeps a whole value as an INTEGER (the pools' are far
                // inside i64).
                match x.fract() == 0.0 && x.abs() < 9.0e18 {
                    true => format!("{}", x as i64),
                    false => format!("{x}"),
                }
            }
        }
    }

    /// The rows with each value as the source holds it.
    pub fn stored_rows(self, rows: &[Row]) -> Vec<Row> {
        rows.iter()
            .map(|r| Row {
                val: r.val.as_deref().map(|v| self.stored(v)),
                ..r.clone()
            })
            .collect()
    }
}

/// A decimal numeral's value; exact enough to order the pools' numbers (at most 12
/// significant digits, so distinct numbers are distinct doubles).
pub fn number(v: &str) -> f64 {
    v.parse()
        .unwrap_or_else(|_| panic!("numeric value {v:?} does not parse"))
}

/// `a` against `b` by value.
pub fn by_number(a: &&str, b: &&str) -> Ordering {
    number(a).total_cmp(&number(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_database_prints_the_number_its_own_way() {
        let pg = values(Column::Decimal, "postgres", "postgres");
        assert_eq!(pg.stored("27.8"), "27.8000");
        assert_eq!(pg.stored("-3.125"), "-3.1250");
        assert_eq!(pg.stored("5"), "5.0000");
        assert_eq!(pg.stored("12.50"), pg.stored("12.5"));
        let lite = values(Column::Decimal, "sqlite", "sqlite");
        assert_eq!(lite.stored("27.8"), "27.8");
        assert_eq!(lite.stored("12.50"), "12.5");
        assert_eq!(lite.stored("0.40"), "0.4");
        assert_eq!(lite.stored("5"), "5");
        assert_eq!(lite.stored("99999999.9999"), "99999999.9999");
        assert_eq!(
            values(Column::Text, "sqlite", "sqlite").stored("12.50"),
            "12.50"
        );
        let double = values(Column::Double, "postgres", "sqlite");
        assert_eq!(double.stored("5"), "5.0");
        assert_eq!(double.stored("-3.125"), "-3.125");
        let double = values(Column::Double, "sqlite", "mariadb");
        assert_eq!(double.stored("3000000000"), "3000000000");
        assert_eq!(double.stored("0.001"), "0.001");
        assert_eq!(by_number(&"9", &"10.5"), Ordering::Less);
    }
}
