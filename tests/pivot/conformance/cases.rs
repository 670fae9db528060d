//! The shared conformance cases: each is a job (entity width, split, aggregate), its source
//! rows, and what must happen. The expected wide result is derived from the rows by the
//! harness (one row per entity, the MAX of each attribute's non-null values), so a case only
//! states its data and, where a backend must refuse, which one and why.

/// One source row: entity key values, attribute name, value.
pub type Row = (Vec<i64>, Option<String>, Option<String>);

pub struct Case {
    pub name: &'static str,
    /// Entity key columns (`e1`, `e2`, …).
    pub keys: usize,
    pub rows: Vec<Row>,
    /// `target.split` as written in YAML (`auto`, a number), or none.
    pub split: Option<&'static str>,
    /// Every backend must fail with this text in the error (nothing written).
    pub error: Option<&'static str>,
    /// Dialects that must refuse (before DDL or by rolling back) naming `split: auto`.
    pub refused_on: &'static [&'static str],
}

impl Case {
    fn pivot(name: &'static str, keys: usize, rows: Vec<Row>) -> Case {
        Case {
            name,
            keys,
            rows,
            split: None,
            error: None,
            refused_on: &[],
        }
    }
}

fn row(key: &[i64], attribute: &str, value: &str) -> Row {
    (
        key.to_vec(),
        Some(attribute.to_string()),
        Some(value.to_string()),
    )
}

/// Every case, in a fixed order.
pub fn all() -> Vec<Case> {
    vec![
        Case::pivot("item_detail", 1, item_detail()),
        Case::pivot(
            "composite_key",
            2,
            vec![
                row(&[1, 1], "x", "a"),
                row(&[1, 2], "x", "b"),
                row(&[2, 1], "y", "c"),
                row(&[1, 1], "y", "d"),
            ],
        ),
        Case::pivot("awkward_names", 1, awkward_names()),
        Case::pivot("long_names", 1, long_names()),
        Case::pivot(
            "empty_and_null",
            1,
            vec![
                (vec![1], None, Some("null name".into())),
                (vec![1], Some(String::new()), Some("empty name".into())),
                row(&[1], "kept", ""),
                (vec![2], Some("kept".into()), None),
                row(&[2], "other", "v"),
                (vec![3], None, Some("only an empty name".into())),
            ],
        ),
        Case::pivot(
            "conflicts",
            1,
            vec![
                row(&[1], "fruit", "apple"),
                row(&[1], "fruit", "banana"),
                row(&[1], "n", "9"),
                row(&[1], "n", "10"),
                row(&[2], "fruit", "cherry"),
            ],
        ),
        Case {
            error: Some("no attributes to pivot"),
            ..Case::pivot("empty_source", 1, Vec::new())
        },
        Case {
            split: Some("auto"),
            ..Case::pivot("dense_1000_split_auto", 1, dense(1_000, 3))
        },
        Case {
            refused_on: &["postgres", "mariadb", "mssql"],
            ..Case::pivot("dense_1000_no_split", 1, dense(1_000, 3))
        },
        Case {
            split: Some("3"),
            ..Case::pivot("split_every_3", 1, dense(8, 2))
        },
    ]
}

fn item_detail() -> Vec<Row> {
    let cells = [
        (1001, "Color", "Red"),
        (1001, "Size", "M"),
        (1001, "Weight (kg)", "1.25"),
        (1001, "Material", "Cotton"),
        (1002, "Color", "Blue"),
        (1002, "Weight (kg)", "0.40"),
        (1002, "Warranty 2 years", "yes"),
        (1003, "Material", "Steel"),
        (1003, "Voltage", "230"),
        (1003, "Warranty 10 years", "yes"),
        (1003, "Weight (kg)", "12.5"),
        (1004, "Color", "Black"),
        (1004, "Size", "L"),
        (1004, "Material", "Oak"),
        (1005, "Voltage", "12"),
        (1005, "Color", "unlisted: Green"),
    ];
    cells.iter().map(|(e, a, v)| row(&[*e], a, v)).collect()
}

fn awkward_names() -> Vec<Row> {
    let names = [
        "close]bracket",
        "it's",
        "say \"hi\"",
        "semi;colon",
        "dash--dash",
        "back\\slash",
        "Grüße straße",
        "日本語",
        "emoji 😀",
        " leading space",
        "trailing space ",
        "Case",
        "CASE",
        "case",
        "select",
        "from",
        "order",
        "2",
        "10",
        "é",
        "e",
        "`tick`",
        "percent%_",
        "ITEM_ID",
        "e1",
    ];
    names
        .iter()
        .enumerate()
        .flat_map(|(i, n)| {
            [
                row(&[1], n, &format!("v{i}")),
                row(&[2], n, &format!("{n}|{i}")),
            ]
        })
        .collect()
}

/// At and over every dialect's limit: 63/64 bytes (PostgreSQL), 64/65 characters (MariaDB),
/// 128/129 UTF-16 units (SQL Server), and multi-byte names long in bytes but not characters.
fn long_names() -> Vec<Row> {
    let names = [
        "a".repeat(63),
        "a".repeat(64),
        format!("{}b", "a".repeat(63)),
        "a".repeat(65),
        "c".repeat(128),
        "c".repeat(129),
        "é".repeat(31),
        "é".repeat(32),
        "é".repeat(33),
        format!("{}x", "é".repeat(32)),
    ];
    names
        .iter()
        .enumerate()
        .map(|(i, n)| row(&[1 + (i as i64 % 2)], n, &format!("long{i}")))
        .collect()
}

/// `attrs` attributes of about 14 bytes each, every one set for each of `entities` entities.
pub fn dense(attrs: usize, entities: i64) -> Vec<Row> {
    (1..=entities)
        .flat_map(|e| {
            (0..attrs).map(move |a| row(&[e], &format!("attr{a:04}"), &format!("value-{e}-{a:06}")))
        })
        .collect()
}
