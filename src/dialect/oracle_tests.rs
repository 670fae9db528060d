use super::*;
use crate::dialect::{entity_column_name, SessionSql};
use crate::terms::EntityKey;

fn table(name: &str) -> TableRef {
    TableRef::parse(name).expect("table name")
}

#[test]
fn unquoted_names_are_looked_up_upper_case_and_quoted_ones_exactly() {
    assert_eq!(
        Oracle.table_exists(&table("item_wide")),
        "SELECT COUNT(*) FROM all_tables WHERE owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND table_name = 'ITEM_WIDE'"
    );
    assert_eq!(
        Oracle.table_exists(&table("hr.\"Item Wide\"")),
        "SELECT COUNT(*) FROM all_tables WHERE owner = 'HR' AND table_name = 'Item Wide'"
    );
    let key = EntityKey {
        expr: "ID.item_id".into(),
        name: "item_id".into(),
    };
    assert_eq!(entity_column_name(&Oracle, &key), "ITEM_ID");
    // Quoted names are case-sensitive: two columns, not one.
    assert_ne!(Oracle.ident_key("Color"), Oracle.ident_key("COLOR"));
}

#[test]
fn names_are_limited_to_128_bytes_and_never_hold_a_double_quote() {
    assert!(Oracle.ident_limit().fits(&"a".repeat(128)));
    assert!(!Oracle.ident_limit().fits(&"é".repeat(65)));
    assert!(Oracle.column_name_problem("say \"hi\"").is_some());
    assert!(Oracle.column_name_problem("").is_some());
    assert!(Oracle.column_name_problem("Weight (kg)").is_none());
}

#[test]
fn attribute_keys_never_compare_with_null() {
    // '' is NULL to Oracle: the empty name's key must still be a non-empty literal.
    assert_eq!(Oracle.attribute_key_literal(""), "'|'");
    assert_eq!(Oracle.attribute_key("AE.NAME"), "'|' || AE.NAME");
    for name in ["", "Size", "a|b", "|"] {
        let encoded = Oracle.encode_attribute_key(name);
        assert_eq!(Oracle.decode_attribute_key(encoded), name);
    }
    assert_eq!(Oracle.quote_literal("it's\0"), "('it''s' || CHR(0) || '')");
}

#[test]
fn several_rows_are_one_insert_all() {
    let t = table("W");
    let cols = ["ID".to_string(), "Size".to_string()];
    assert_eq!(
        Oracle.insert_values(&t, &cols, 1),
        "INSERT INTO W (\"ID\", \"Size\") VALUES (:1, :2)"
    );
    assert_eq!(
        Oracle.insert_values(&t, &cols, 2),
        "INSERT ALL\n  INTO W (\"ID\", \"Size\") VALUES (:1, :2)\n  INTO W (\"ID\", \"Size\") VALUES (:3, :4)\nSELECT 1 FROM dual"
    );
    assert_eq!(
        Oracle.limit("SELECT 1 FROM dual", 2),
        "SELECT 1 FROM dual FETCH FIRST 2 ROWS ONLY"
    );
}

#[test]
fn a_replaced_target_is_renamed_aside_then_dropped() {
    let (staging, target, old) = (table("W__new"), table("W"), table("W__old"));
    assert_eq!(
        Oracle.swap_in(&staging, &target, Some(&old)),
        [
            "ALTER TABLE W RENAME TO W__old",
            "ALTER TABLE W__new RENAME TO W",
            "DROP TABLE W__old"
        ]
    );
    assert!(!Oracle.transactional_ddl());
    let lock = Oracle.write_lock(&target).expect("a write lock");
    assert!(lock.contains("DBMS_LOCK.REQUEST(ORA_HASH('eavpivot:' || SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') || '.' || 'W', 1073741823)"), "{lock}");
}

#[test]
fn typed_columns_convert_by_format_model() {
    let typed = |kind: ColumnKind| Typed {
        sql_type: Oracle.column_sql_type(&kind),
        kind,
        why: String::new(),
        round_trips: true,
        by_value: false,
    };
    assert_eq!(
        Oracle.cast_to("v", &typed(ColumnKind::Date)),
        "TO_DATE(v, 'YYYY-MM-DD')"
    );
    assert_eq!(
        Oracle.cast_to("v", &typed(ColumnKind::BigInt)),
        "CAST(v AS NUMBER(19))"
    );
    let text = ColumnKind::Text {
        chars: 10,
        utf16: 10,
        bytes: 30,
    };
    assert_eq!(Oracle.column_sql_type(&text), "VARCHAR2(10 CHAR)");
    let long = ColumnKind::Text {
        chars: 2_000,
        utf16: 2_000,
        bytes: 6_000,
    };
    assert_eq!(Oracle.column_sql_type(&long), "CLOB");
    assert!(!Oracle.stores(&ColumnKind::Decimal {
        precision: 4,
        scale: 1
    }));
    assert_eq!(
        Oracle.portable_type("NUMBER(10,0)"),
        Some(ColumnKind::BigInt)
    );
    assert_eq!(
        Oracle.portable_type("DATE"),
        Some(ColumnKind::Timestamp { fraction: 0 })
    );
}

#[test]
fn session_sql_bounds_ddl_lock_waits_in_seconds() {
    assert_eq!(
        Oracle.lock_timeout(std::time::Duration::from_millis(30_500)),
        ["ALTER SESSION SET DDL_LOCK_TIMEOUT = 30"]
    );
}
