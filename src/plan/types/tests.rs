use super::*;

fn decide(values: &[&str]) -> (ColumnKind, String) {
    let mut s = Survey::default();
    for (i, v) in values.iter().enumerate() {
        s.observe(&Value::Text(v.to_string()), &[Value::Int(i as i64 + 1)]);
    }
    s.decide()
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
    assert_eq!(why, "int: integers from 7 to 70000");
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
            "DECIMAL(3,2)"
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
