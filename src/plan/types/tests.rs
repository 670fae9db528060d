use super::*;

/// `pivot.infer: { widths: exact, numbers: text }`: the narrowest type every value prints
/// back through as its exact text.
const EXACT_TEXT: Infer = Infer {
    widths: InferWidths::Exact,
    numbers: InferNumbers::Text,
};

fn survey(values: &[&str]) -> Survey {
    let mut s = Survey::default();
    for (i, v) in values.iter().enumerate() {
        s.observe(&Value::Text(v.to_string()), &[Value::Int(i as i64 + 1)]);
    }
    s
}

/// The exact text mode (the ladder before `pivot.infer` existed).
fn decide(values: &[&str]) -> (ColumnKind, String) {
    survey(values).decide_with(EXACT_TEXT)
}

/// The defaults: headroom widths, numbers by value.
fn decide_default(values: &[&str]) -> (ColumnKind, String) {
    survey(values).decide()
}

fn dec(precision: u32, scale: u32) -> ColumnKind {
    ColumnKind::Decimal { precision, scale }
}

#[test]
fn headroom_widens_integers_decimals_and_text() {
    // A counter at 6,771: INTEGER by default, SMALLINT only when asked for exact widths.
    let (kind, why) = decide_default(&["1", "6771"]);
    assert_eq!(kind, ColumnKind::Int);
    assert_eq!(
        why,
        "int, headroom (exact: smallint): integers from 1 to 6771"
    );
    let exact = Infer {
        widths: InferWidths::Exact,
        ..Infer::default()
    };
    let (kind, why) = survey(&["1", "6771"]).decide_with(exact);
    assert_eq!(kind, ColumnKind::SmallInt);
    assert_eq!(why, "smallint, exact: integers from 1 to 6771");
    assert_eq!(decide_default(&["70000"]).0, ColumnKind::Int);
    assert_eq!(decide_default(&["3000000000"]).0, ColumnKind::BigInt);
    assert_eq!(decide_default(&["9223372036854775808"]).0, dec(38, 0));
    // Body weight 27.8: DECIMAL(18,1), not DECIMAL(3,1); wide decimals keep their precision.
    assert_eq!(decide_default(&["27.8"]).0, dec(18, 1));
    assert_eq!(survey(&["27.8"]).decide_with(exact).0, dec(3, 1));
    let wide = format!("{}.5", "9".repeat(30));
    assert_eq!(decide_default(&[&wide]).0, dec(31, 1));
    // Text: rounded up to a step; '' alone is 32, not VARCHAR(1); beyond 4,000 as measured.
    let text = |n: u64| ColumnKind::Text {
        chars: n,
        utf16: n,
        bytes: n,
    };
    assert_eq!(
        decide_default(&[""]).0,
        ColumnKind::Text {
            chars: 32,
            utf16: 32,
            bytes: 0
        }
    );
    let long = "x".repeat(300);
    assert_eq!(
        decide_default(&[&long]).0,
        ColumnKind::Text {
            chars: 512,
            utf16: 512,
            bytes: 300
        }
    );
    let huge = "x".repeat(5000);
    assert_eq!(decide_default(&[&huge]).0, text(5000));
    let (_, why) = decide_default(&["N/A"]);
    assert_eq!(why, "text: 'N/A' for entity 1");
}

#[test]
fn numbers_by_value_join_scales_and_integers() {
    // '1.25' and '12.5' are one DECIMAL by value, text when the exact text must come back.
    let (kind, why) = decide_default(&["1.25", "12.5"]);
    assert_eq!(kind, dec(18, 2));
    assert!(why.starts_with("decimal(18,2), headroom (exact: decimal(4,2)), by value: numbers with at most 2 integer and 2 fractional digits"), "{why}");
    let text_mode = Infer {
        numbers: InferNumbers::Text,
        ..Infer::default()
    };
    assert!(survey(&["1.25", "12.5"]).decide_with(text_mode).0.is_text());
    let exact = Infer {
        widths: InferWidths::Exact,
        ..Infer::default()
    };
    assert_eq!(
        survey(&["12.5", "12.50", "-0.125"]).decide_with(exact).0,
        dec(5, 3)
    );
    // Integers among decimals: DECIMAL; integers alone stay integers.
    assert_eq!(
        survey(&["5", "5.5", "1234"]).decide_with(exact).0,
        dec(5, 1)
    );
    assert_eq!(decide_default(&["5", "12"]).0, ColumnKind::Int);
    // Not plain decimal numerals: the whole attribute stays text in either mode.
    for trap in [
        "007", "1e5", " 12", "12 ", "+5", "-0", "-0.0", ".5", "5.", "1,5", "0x1F",
    ] {
        assert!(decide_default(&["1.5", trap]).0.is_text(), "{trap:?}");
        assert!(decide_default(&[trap]).0.is_text(), "{trap:?}");
    }
    // Precision beyond 38 digits across values: text.
    let int_digits = "9".repeat(30);
    let frac = format!("0.{}", "1".repeat(10));
    assert!(decide_default(&[&int_digits, &frac]).0.is_text());
}

#[test]
fn timestamps_by_value_take_the_largest_fraction() {
    assert_eq!(
        decide_default(&[
            "2024-01-01 10:00:00",
            "2024-01-01 10:00:00.5",
            "2024-01-01 10:00:00.25"
        ])
        .0,
        ColumnKind::Timestamp { fraction: 2 }
    );
    assert!(decide(&["2024-01-01 10:00:00", "2024-01-01 10:00:00.5"])
        .0
        .is_text());
    // By value `.50` is the instant `.5` is; as text PostgreSQL would print it back as `.5`.
    assert_eq!(
        decide_default(&["2024-01-01 10:00:00.50", "2024-01-01 10:00:00.125"]).0,
        ColumnKind::Timestamp { fraction: 3 }
    );
    assert!(decide(&["2024-01-01 10:00:00.50"]).0.is_text());
}

fn kind(values: &[&str]) -> ColumnKind {
    decide(values).0
}

fn text(chars: u64) -> ColumnKind {
    ColumnKind::Text {
        chars,
        utf16: chars,
        bytes: chars,
    }
}

#[test]
fn integers_take_the_narrowest_type_by_range() {
    assert_eq!(kind(&["1", "-5", "32767"]), ColumnKind::SmallInt);
    assert_eq!(kind(&["-32769", "0"]), ColumnKind::Int);
    assert_eq!(kind(&["2147483648"]), ColumnKind::BigInt);
    assert_eq!(kind(&["-9223372036854775808"]), ColumnKind::BigInt);
    assert_eq!(
        kind(&["9223372036854775808"]),
        ColumnKind::Decimal {
            precision: 19,
            scale: 0
        }
    );
    let (_, why) = decide(&["7", "70000"]);
    assert_eq!(why, "int, exact: integers from 7 to 70000");
}

#[test]
fn the_traps_stay_text() {
    // Leading zeros, a plus, spaces, exponent, negative zero: none prints back as written.
    for trap in [
        "00501", "+5", " 5", "5 ", "1e5", "-0", "N/A", "", "1,5", ".5", "5.",
    ] {
        assert_eq!(kind(&[trap]), text(trap.len() as u64), "{trap:?}");
    }
    let (_, why) = decide(&["12", "N/A"]);
    assert_eq!(why, "text: 'N/A' for entity 2");
    let mut mixed = Survey::default();
    for v in ["12", "N/A", "7"] {
        mixed.observe(&Value::Text(v.into()), &[]);
    }
    assert_eq!(mixed.typed_values, 2);
}

#[test]
fn decimals_keep_their_scale_and_need_the_same_scale_everywhere() {
    assert_eq!(
        kind(&["0.40", "12.50", "-3.25"]),
        ColumnKind::Decimal {
            precision: 4,
            scale: 2
        }
    );
    assert_eq!(
        kind(&["0.40"]),
        ColumnKind::Decimal {
            precision: 3,
            scale: 2
        }
    );
    // 1.5 in a DECIMAL(p,2) would print 1.50; 5 would print 5.00; -0.00 prints 0.00.
    assert_eq!(kind(&["0.40", "1.5"]), text(4));
    assert_eq!(kind(&["0.40", "5"]), text(4));
    assert_eq!(kind(&["-0.00"]), text(5));
    let (_, why) = decide(&["1.25", "0.40", "12"]);
    assert!(why.starts_with("text: '1.25' for entity 1 and "), "{why}");
}

#[test]
fn dates_must_be_real_calendar_days() {
    assert_eq!(kind(&["2024-02-29", "1999-12-31"]), ColumnKind::Date);
    for bad in [
        "2023-02-30",
        "2023-13-01",
        "2023-1-01",
        "0999-01-01",
        "2023/01/01",
    ] {
        assert!(kind(&[bad]).is_text(), "{bad}");
    }
    assert!(kind(&["2024-01-01", "2024-01-01 10:00:00"]).is_text());
}

#[test]
fn timestamps_need_one_fraction_length_without_trailing_zeros() {
    assert_eq!(
        kind(&["2024-01-01 00:00:00", "2024-12-31 23:59:59"]),
        ColumnKind::Timestamp { fraction: 0 }
    );
    assert_eq!(
        kind(&["2024-01-01 10:00:00.25", "2024-01-01 10:00:00.11"]),
        ColumnKind::Timestamp { fraction: 2 }
    );
    for bad in [
        "2024-01-01 10:00:00.50",
        "2024-01-01 24:00:00",
        "2024-01-01T10:00:00",
        "2024-01-01 10:00:00.1234567",
    ] {
        assert!(kind(&[bad]).is_text(), "{bad}");
    }
    assert!(kind(&["2024-01-01 10:00:00", "2024-01-01 10:00:00.5"]).is_text());
}

#[test]
fn booleans_typed_sources_and_text_widths() {
    assert_eq!(kind(&["true", "false"]), ColumnKind::Boolean);
    assert!(kind(&["true", "1"]).is_text());
    let mut s = Survey::default();
    s.observe(&Value::Int(70_000), &[]);
    s.observe(&Value::Int(-1), &[]);
    s.observe(&Value::Null, &[]);
    assert_eq!(s.decide().0, ColumnKind::Int);
    assert_eq!(s.values, 2);
    let mut f = Survey::default();
    f.observe(&Value::Float(0.5), &[]);
    assert_eq!(f.decide().0, ColumnKind::Float);
    f.observe(&Value::Text("x".into()), &[]);
    assert!(f.decide().0.is_text());
    assert_eq!(
        kind(&["é", "日本"]),
        ColumnKind::Text {
            chars: 2,
            utf16: 2,
            bytes: 6
        }
    );
    assert_eq!(
        kind(&["𝄞"]),
        ColumnKind::Text {
            chars: 1,
            utf16: 2,
            bytes: 4
        }
    );
    assert_eq!(Survey::default().decide().1, "text: no non-null values");
}

#[test]
fn declared_types_check_every_value() {
    assert_eq!(parse_declared("INT"), ColumnKind::Int);
    assert_eq!(
        parse_declared("numeric(10, 2)"),
        ColumnKind::Decimal {
            precision: 10,
            scale: 2
        }
    );
    assert_eq!(
        parse_declared("DATETIME2(3)"),
        ColumnKind::Timestamp { fraction: 3 }
    );
    assert_eq!(
        parse_declared("JSONB"),
        ColumnKind::Declared("JSONB".into())
    );
    let d = parse_declared("DECIMAL(5,2)");
    assert!(converts("123.45", &d) && converts("1.5", &d) && converts("0.40", &d));
    assert!(converts("-999", &d) && !converts("1000", &d) && !converts("1.234", &d));
    assert!(!converts("N/A", &ColumnKind::Int) && !converts("40000", &ColumnKind::SmallInt));
    assert!(converts(
        "2024-01-01 10:00:00.5",
        &ColumnKind::Timestamp { fraction: 3 }
    ));
    assert!(!converts(
        "2024-01-01 10:00:00.5",
        &ColumnKind::Timestamp { fraction: 0 }
    ));
}

#[test]
fn the_stream_binds_integers_as_integers_and_the_rest_as_text() {
    assert_eq!(
        convert(Value::Text("-12".into()), &ColumnKind::Int),
        Value::Int(-12)
    );
    assert_eq!(
        convert(
            Value::Text("0.40".into()),
            &ColumnKind::Decimal {
                precision: 3,
                scale: 2
            }
        ),
        Value::Text("0.40".into())
    );
    assert_eq!(convert(Value::Null, &ColumnKind::Int), Value::Null);
}

/// The plan types each column from its survey: MariaDB bounds text with VARCHAR only while the
/// row's declared widths fit 65,535 bytes; SQLite keeps decimals as TEXT; pivot.types refuses
/// a value that does not convert, naming attribute, entity and value.
#[test]
fn the_plan_types_columns_per_dialect() {
    use crate::dialect::{MariaDb, Sqlite};
    use crate::plan::{build_plan, Discovered, Discovery, PlanOptions};
    let parse = |pivot: &str| {
        let text = format!(
            "name: t\nsource: {{ table: kv }}\nentity: [id]\nattribute: a\nvalue: v\n\
             pivot: {{ {pivot} }}\ntarget: {{ table: wide, split: auto }}\n"
        );
        crate::config::parse_job(&text, std::path::Path::new("t.yaml")).expect("job")
    };
    let mut discovery = Discovery::default();
    let long = "x".repeat(5_000);
    for i in 0..5 {
        let name = format!("long{i}");
        let mut s = Survey::default();
        s.observe(&Value::Text(long.clone()), &[Value::Int(1)]);
        discovery.attributes.push(Discovered {
            name: name.clone(),
            rows: 1,
            values: 1,
            widths: Some((5_000, 5_000)),
        });
        discovery.surveys.insert(name, s);
    }
    let mut price = Survey::default();
    price.observe(&Value::Text("0.40".into()), &[Value::Int(7)]);
    discovery.attributes.push(Discovered {
        name: "price".into(),
        rows: 1,
        values: 1,
        widths: Some((4, 4)),
    });
    discovery.surveys.insert("price".into(), price);
    let infer = parse("column_type: infer");
    let plan = build_plan(
        &infer,
        &MariaDb,
        &discovery,
        &[Some("INT".into())],
        PlanOptions::default(),
    )
    .expect("plan");
    let types: Vec<String> = plan
        .columns()
        .map(|(t, c)| c.sql_type(t).to_string())
        .collect();
    // 3 × (4 × 5,000 + 2) bytes fit 65,535; the fourth would not.
    assert_eq!(
        types,
        [
            "VARCHAR(5000)",
            "VARCHAR(5000)",
            "VARCHAR(5000)",
            "LONGTEXT",
            "LONGTEXT",
            // The default headroom: precision 18, the scale seen.
            "DECIMAL(18,2)"
        ]
    );
    let plan =
        build_plan(&infer, &Sqlite, &discovery, &[None], PlanOptions::default()).expect("plan");
    let price = plan
        .columns()
        .find(|(_, c)| c.attribute == "price")
        .expect("price")
        .1;
    let typed = price.typed.as_ref().expect("typed");
    assert_eq!(typed.sql_type, "TEXT");
    assert!(typed.why.contains("kept as text: sqlite"), "{}", typed.why);
    // pivot.types: the survey checks every value against the declared kind during the scan.
    let mut misfit = Survey::declared(Some(parse_declared("INT")));
    misfit.observe(&Value::Text("0.40".into()), &[Value::Int(7)]);
    discovery.surveys.insert("price".into(), misfit);
    let err = build_plan(
        &parse("types: { price: INT }"),
        &MariaDb,
        &discovery,
        &[None],
        PlanOptions::default(),
    )
    .expect_err("refused");
    assert_eq!(
        err.to_string(),
        "pivot.types: attribute 'price' is declared INT, but '0.40' for entity 7 does not convert to it exactly; nothing was written"
    );
}

/// 21.4: on SQLite a declared NUMERIC/REAL-affinity type would turn `149.9900` into 149.99
/// and `82.0` into 82: such a column is TEXT, with a note; integer columns stay INTEGER, and a
/// server keeps the declared type.
#[test]
fn sqlite_declared_numeric_types_keep_the_text() {
    use crate::dialect::{MariaDb, Sqlite};
    use crate::plan::{build_plan, Discovered, Discovery, PlanOptions};
    let job = crate::config::parse_job(
        "name: t\nsource: { table: kv }\nentity: [id]\nattribute: a\nvalue: v\n\
         pivot: { types: { price: \"DECIMAL(12,4)\", qty: INT, w: REAL, n: NUMERIC } }\n\
         target: { table: wide }\n",
        std::path::Path::new("t.yaml"),
    )
    .expect("job");
    let mut discovery = Discovery::default();
    let data: [(&str, &[&str]); 4] = [
        ("price", &["149.9900", "82.0"]),
        ("qty", &["82", "-3"]),
        ("w", &["82"]),
        ("n", &["7", "12"]),
    ];
    for (name, values) in data {
        let declared = job.pivot.types.get(name).map(|t| parse_declared(t));
        let mut s = Survey::declared(declared);
        for v in values {
            s.observe(&Value::Text(v.to_string()), &[Value::Int(1)]);
        }
        discovery.attributes.push(Discovered {
            name: name.into(),
            rows: values.len() as u64,
            values: values.len() as u64,
            widths: None,
        });
        discovery.surveys.insert(name.into(), s);
    }
    let plan =
        build_plan(&job, &Sqlite, &discovery, &[None], PlanOptions::default()).expect("plan");
    let types = |plan: &crate::plan::Plan| -> Vec<String> {
        ["price", "qty", "w", "n"]
            .iter()
            .map(|a| {
                let (t, c) = plan
                    .columns()
                    .find(|(_, c)| c.attribute == *a)
                    .expect("column");
                c.sql_type(t).to_string()
            })
            .collect()
    };
    // REAL would print 82 as 82.0; NUMERIC keeps canonical integers as integers.
    assert_eq!(types(&plan), ["TEXT", "INT", "TEXT", "NUMERIC"]);
    let typed_notes = |plan: &crate::plan::Plan| {
        plan.notes
            .iter()
            .filter(|n| n.starts_with("pivot.types"))
            .count()
    };
    assert_eq!(typed_notes(&plan), 2, "{:?}", plan.notes);
    assert_eq!(
        plan.notes.iter().find(|n| n.contains("'price'")).expect("note"),
        "pivot.types: attribute 'price' is declared DECIMAL(12,4) but stored as TEXT: SQLite's NUMERIC affinity would turn numeric text into numbers ('149.9900' for entity 1)"
    );
    let plan =
        build_plan(&job, &MariaDb, &discovery, &[None], PlanOptions::default()).expect("plan");
    assert_eq!(types(&plan), ["DECIMAL(12,4)", "INT", "REAL", "NUMERIC"]);
    assert_eq!(typed_notes(&plan), 0, "{:?}", plan.notes);
}

/// MariaDB: text lengths rounded up to a step while the row's declared widths fit 65,535
/// bytes, then the exact length, then LONGTEXT; the reason says which.
#[test]
fn text_headroom_gives_way_to_the_row_limit() {
    use crate::dialect::MariaDb;
    use crate::plan::{build_plan, Discovered, Discovery, PlanOptions};
    let job = crate::config::parse_job(
        "name: t\nsource: { table: kv }\nentity: [id]\nattribute: a\nvalue: v\n\
         pivot: { column_type: infer, columns: [a1, a2, a3, a4, b, c] }\ntarget: { table: wide }\n",
        std::path::Path::new("t.yaml"),
    )
    .expect("job");
    let mut discovery = Discovery::default();
    let values = [
        ("a1", 3_990),
        ("a2", 3_990),
        ("a3", 3_990),
        ("a4", 3_990),
        ("b", 300),
        ("c", 3),
    ];
    for (name, len) in values {
        let mut s = Survey::default();
        s.observe(&Value::Text("x".repeat(len)), &[Value::Int(1)]);
        discovery.attributes.push(Discovered {
            name: name.into(),
            rows: 1,
            values: 1,
            widths: Some((len as u64, len as u64)),
        });
        discovery.surveys.insert(name.into(), s);
    }
    let plan =
        build_plan(&job, &MariaDb, &discovery, &[None], PlanOptions::default()).expect("plan");
    let got: Vec<(String, String)> = plan
        .columns()
        .map(|(t, c)| {
            let why = c.typed.as_ref().map(|t| t.why.clone()).unwrap_or_default();
            (c.sql_type(t).to_string(), why)
        })
        .collect();
    let types: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
    // 4 × (4 × 4,000 + 2) = 64,008 bytes; VARCHAR(512) for b would pass 65,535, VARCHAR(300)
    // (1,202 bytes) does not; c's VARCHAR(32) (130 bytes) still fits the 325 left.
    assert_eq!(
        types,
        [
            "VARCHAR(4000)",
            "VARCHAR(4000)",
            "VARCHAR(4000)",
            "VARCHAR(4000)",
            "VARCHAR(300)",
            "VARCHAR(32)"
        ]
    );
    assert!(
        got[0]
            .1
            .ends_with("; VARCHAR(4000), headroom (exact: VARCHAR(3990))"),
        "{}",
        got[0].1
    );
    assert!(
        got[4]
            .1
            .contains("; exact width: the row's declared widths would pass 65535 bytes"),
        "{}",
        got[4].1
    );
    assert!(
        got[5]
            .1
            .ends_with("VARCHAR(32), headroom (exact: VARCHAR(3))"),
        "{}",
        got[5].1
    );
}

/// Digits counted arithmetically are the printed digits, at every power of ten and the
/// extremes.
#[test]
fn integer_digits_match_the_printed_length() {
    let mut cases = vec![0, 1, -1, i128::MAX, i128::MIN, i128::MIN + 1];
    for p in 0..38 {
        let ten = 10i128.pow(p);
        cases.extend([ten - 1, ten, ten + 1, -ten, 1 - ten]);
    }
    for n in cases {
        let printed = n.unsigned_abs().to_string().len() as u32;
        assert_eq!(integer_digits(n), printed, "{n}");
    }
}

/// A value the source already holds as a float (a SQLite REAL, a MariaDB DOUBLE) is checked
/// against `pivot.types` as its text is: 27.85 declared BIGINT was loaded as 28 into MariaDB,
/// and as 27.9 into a DECIMAL(12,1), silently (the differential harness, seed 46).
#[test]
fn a_float_value_is_checked_against_its_declared_type() {
    let cases = [
        ("BIGINT", 27.85, Some("'27.85'")),
        ("DECIMAL(12,1)", 27.85, Some("'27.85'")),
        ("BIGINT", 5.0, None),
        ("DECIMAL(12,4)", 27.85, None),
        ("DOUBLE PRECISION", 27.85, None),
    ];
    for (declared, value, misfit) in cases {
        let mut s = Survey::declared(Some(parse_declared(declared)));
        s.observe(&Value::Float(value), &[Value::Int(1)]);
        let got = s.misfit.as_ref().map(ToString::to_string);
        match misfit {
            Some(text) => assert_eq!(
                got.as_deref(),
                Some(format!("{text} for entity 1").as_str()),
                "{declared} {value}"
            ),
            None => assert_eq!(got, None, "{declared} {value}"),
        }
    }
}
