//! Which dialects exist and the names `--dialect` (and `sql/{dialect}/`) know them by: one
//! table. A dialect is SQL text only, so every one is here whichever drivers a build has;
//! the drivers that connect in each dialect are [`crate::backend::drivers::DRIVERS`].

use super::{Dialect, MariaDb, MsSql, Oracle, Postgres, Sqlite};

/// Every dialect, first its own name ([`crate::dialect::Quoting::name`]), then the other names it answers to.
const NAMED: [(&dyn Dialect, &[&str]); 5] = [
    (&Sqlite, &["sqlite"]),
    (&Postgres, &["postgres", "postgresql"]),
    (&MariaDb, &["mariadb", "mysql"]),
    (&MsSql, &["mssql", "sqlserver", "tsql"]),
    (&Oracle, &["oracle"]),
];

/// Every dialect, in [`NAMED`]'s order.
pub const ALL: [&dyn Dialect; NAMED.len()] = {
    let mut all: [&dyn Dialect; NAMED.len()] = [NAMED[0].0; NAMED.len()];
    let mut i = 1;
    while i < NAMED.len() {
        all[i] = NAMED[i].0;
        i += 1;
    }
    all
};

/// The dialect for a name used in `--dialect` and `sql/{dialect}/`.
pub fn by_name(name: &str) -> Option<&'static dyn Dialect> {
    NAMED
        .iter()
        .find(|(_, names)| names.contains(&name))
        .map(|(d, _)| *d)
}

/// `sqlite, postgres, mariadb, mssql or oracle`: the dialects' own names, for an error.
pub fn known_names() -> String {
    let names: Vec<&str> = ALL.iter().map(|d| d.name()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_finds_its_dialect_and_the_first_is_its_own() {
        for (d, names) in NAMED {
            assert_eq!(names[0], d.name());
            for name in names {
                assert_eq!(by_name(name).map(|x| x.name()), Some(d.name()));
            }
        }
        assert_eq!(known_names(), "sqlite, postgres, mariadb, mssql or oracle");
    }
}
