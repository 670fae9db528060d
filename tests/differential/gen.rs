//! Seeded random cases: a job (keys, join, strategy, aggregate, types, merge settings, split,
//! `where`, `changed`, databases) and its source snapshots, one per run (a replace, then
//! merges of random deltas). Everything comes from one `u64`, so a seed is a reproduction.

use std::collections::{BTreeMap, BTreeSet};

use super::model::{Agg, Job, OnNew, Row, Step, K};
use super::numbers::Column;

/// splitmix64: small, seedable, good enough to spread cases.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// true with probability `p` percent.
    pub fn pct(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Feature families: `base` always; the others can be switched off while the product
/// does not implement them yet (`EAVPIVOT_DIFF_FEATURES=base` or a comma list).
pub const FAMILIES: [&str; 12] = [
    "where_rows",     // merge with a row-level `where` (issue 21 defect 1, the refusal rule)
    "changed",        // source.changed
    "changed_key", // source.changed testing the entity key alone (filtered directly on PostgreSQL)
    "typed_merge", // infer / pivot.types merged again (defects 2, 3)
    "cross_infer", // infer with --target-connection (defect 5)
    "types",       // pivot.types overrides (defect 4)
    "idcase",      // mixed-case table and key names (defect 9)
    "nulled",      // --json merged[].nulled
    "key_twins",   // entity keys one under a case-insensitive, PAD SPACE collation ('k', 'K', 'k ')
    "same_db_guard", // issue 17: --target-connection naming the source's database (named case only)
    "numeric_values", // the source's value column DECIMAL(12,4), not text (numbers.rs)
    "float_values", // the source's value column a double (numbers.rs)
];

#[derive(Clone, Debug)]
pub struct Features(pub BTreeSet<String>);

impl Features {
    pub fn from_env() -> Features {
        let spec = std::env::var("EAVPIVOT_DIFF_FEATURES").unwrap_or_else(|_| "all".into());
        let mut set = BTreeSet::new();
        for f in spec.split(',').map(str::trim) {
            match f {
                "all" => set.extend(FAMILIES.iter().map(|s| s.to_string())),
                "base" | "" => {}
                f => {
                    assert!(
                        FAMILIES.contains(&f),
                        "EAVPIVOT_DIFF_FEATURES: unknown family {f}"
                    );
                    set.insert(f.to_string());
                }
            }
        }
        Features(set)
    }
    pub fn on(&self, family: &str) -> bool {
        self.0.contains(family)
    }
}

#[derive(Clone, Debug)]
pub struct KeyCol {
    pub name: String,
    pub text: bool,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub keys: Vec<KeyCol>,
    /// Attribute names come from a second table joined on an id.
    pub join: bool,
    pub job: Job,
    pub steps: Vec<Step>,
    /// (source, target) backend indices when the target is another database.
    pub cross: Option<(usize, usize)>,
    /// The source's value column's type; where not text, every value is a decimal numeral
    /// that fits it ([`super::numbers`]).
    pub values: Column,
    /// The families this case exercises (for the report).
    pub uses: BTreeSet<&'static str>,
}

impl Case {
    /// Whether any step's source has an attribute name containing `c`.
    pub fn has_attribute_with(&self, c: char) -> bool {
        self.steps
            .iter()
            .flat_map(|s| &s.rows)
            .any(|r| r.attr.as_deref().is_some_and(|a| a.contains(c)))
    }
}

/// Attribute names that need quoting, collide as identifiers or are skipped.
const NAMES: [&str; 17] = [
    "color",
    "Color",
    "size",
    "it's",
    "say \"hi\"",
    "[br]",
    "back`tick",
    "50%",
    ";drop",
    "a",
    "a ",
    "naïve ☃",
    "x.y",
    "-- c",
    "Weight (kg)",
    "n2",
    // 130 characters: cut to fit on PostgreSQL (63 bytes), MariaDB (64) and SQL Server (128).
    "long attribute name long attribute name long attribute name long attribute name long attribute name long attribute name 0123456789",
];
const TEXTS: [&str; 14] = [
    "red",
    "it's",
    "say \"hi\"",
    "[x]",
    "`b`",
    "100%",
    "a;b",
    "",
    "back\\slash",
    "ü☃ naïve",
    "  lead",
    "trail  ",
    "--c",
    "NULL",
];
const INTS: [&str; 7] = ["5", "-12", "0", "6771", "40000", "3000000000", "99"];
const DECS: [&str; 6] = ["27.8", "27.85", "12.5", "12.50", "0.40", "-3.125"];
/// The values of a numeric value column: INTS and DECS that fit DECIMAL(12,4) (not
/// `3000000000`: ten integer digits, the type holds eight), and its largest magnitudes.
/// Text order and value order differ among them (`99` < `27.8` < `5` by text).
const NUMERIC: [&str; 14] = [
    "5",
    "-12",
    "0",
    "6771",
    "40000",
    "99",
    "27.8",
    "27.85",
    "12.5",
    "12.50",
    "0.40",
    "-3.125",
    "99999999.9999",
    "-12345678.5",
];
/// The values of a double value column: numerals of few digits, each the shortest text of
/// its double in every database (fixed notation in PostgreSQL's too: exponents -4 to 15), and
/// SQLite's `5.0` for the whole ones. Text order and value order differ among them.
const DOUBLES: [&str; 14] = [
    "5",
    "-12",
    "0",
    "6771",
    "40000",
    "99",
    "27.8",
    "27.85",
    "12.5",
    "0.4",
    "-3.125",
    "0.001",
    "1024.75",
    "3000000000",
];
const DATES: [&str; 4] = ["2024-01-01", "2024-01-02", "1999-12-31", "2024-02-29"];
const STAMPS: [&str; 3] = [
    "2024-01-02 10:30:00",
    "2024-01-02 10:30:00.5",
    "2001-02-03 04:05:06",
];
const ODD: [&str; 8] = [
    "007",
    "1e5",
    " 12",
    "+5",
    "12.5",
    "12.50",
    "2024-02-30",
    "true",
];
const TEXT_KEYS: [&str; 8] = ["a", "b'c", "d\"e", "[f]", "g;h", "i%j", "k l", "mü"];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Int,
    Dec,
    Date,
    Stamp,
    Odd,
}

fn value(rng: &mut Rng, kind: Kind) -> String {
    let pool: &[&str] = match kind {
        Kind::Text => &TEXTS,
        Kind::Int => &INTS,
        Kind::Dec => &DECS,
        Kind::Date => &DATES,
        Kind::Stamp => &STAMPS,
        Kind::Odd => &ODD,
    };
    rng.pick(pool).to_string()
}

struct Gen {
    rng: Rng,
    kinds: BTreeMap<Option<String>, Kind>,
    keys: Vec<KeyCol>,
    next_entity: i64,
    row_level_grp: bool,
}

impl Gen {
    fn entity(&mut self) -> Vec<K> {
        self.next_entity += 1;
        let n = self.next_entity;
        self.keys
            .iter()
            .enumerate()
            .map(|(i, k)| match k.text {
                true => K::T(format!("{}{}", TEXT_KEYS[(n as usize + i) % 8], n / 8)),
                false => K::I(n * 10 + i as i64),
            })
            .collect()
    }

    fn cell(&mut self, key: &[K], attr: &Option<String>, grp: i64, stamp: i64) -> Vec<Row> {
        let kind = self.kinds.get(attr).copied().unwrap_or(Kind::Text);
        let grp = if self.row_level_grp {
            self.rng.below(3) as i64
        } else {
            grp
        };
        let row = |val: Option<String>| Row {
            key: key.to_vec(),
            attr: attr.clone(),
            val,
            grp,
            modified: stamp,
        };
        let first = match self.rng.pct(8) {
            true => None,
            false => Some(value(&mut self.rng, kind)),
        };
        if !self.rng.pct(12) {
            return vec![row(first)];
        }
        // A conflict: two rows for one entity+attribute.
        // Any texts: both strategies keep the greatest (least) by bytes on every engine.
        let (a, b) = (value(&mut self.rng, kind), value(&mut self.rng, kind));
        let b = if self.rng.pct(15) { None } else { Some(b) };
        vec![row(Some(a)), row(b)]
    }

    fn entity_rows(&mut self, key: &[K], attrs: &[Option<String>], stamp: i64) -> Vec<Row> {
        let grp = self.rng.below(3) as i64;
        let mut rows = Vec::new();
        for a in attrs {
            if self.rng.pct(65) {
                rows.extend(self.cell(key, a, grp, stamp));
            }
        }
        if rows.is_empty() {
            rows.extend(self.cell(key, &attrs[0], grp, stamp));
        }
        rows
    }
}

pub fn case(seed: u64, f: &Features) -> Case {
    let mut rng = Rng::new(seed);
    let mut uses = BTreeSet::new();
    let idcase = f.on("idcase") && rng.pct(30);
    let keys: Vec<KeyCol> = (0..1 + usize::from(rng.pct(30)))
        .map(|i| KeyCol {
            name: match (idcase, i) {
                (true, 0) => "ItemId".into(),
                (true, _) => "Part_No".into(),
                (false, 0) => "id".into(),
                (false, _) => "k2".into(),
            },
            text: rng.pct(35),
        })
        .collect();
    if idcase {
        uses.insert("idcase");
    }
    let cross = rng.pct(25).then(|| {
        let s = rng.below(3);
        (s, (s + 1 + rng.below(2)) % 3)
    });
    let mut job = Job {
        aggregate: *rng.pick(&[Agg::Max, Agg::Max, Agg::Min, Agg::Error]),
        infer: rng.pct(35),
        types: BTreeMap::new(),
        on_missing_delete: rng.pct(30),
        on_new: *rng.pick(&[OnNew::Add, OnNew::Add, OnNew::Error, OnNew::Ignore]),
        split: rng.pct(15).then(|| 1 + rng.below(2)),
        pushdown: rng.pct(50),
    };
    if cross.is_some() && job.infer && !f.on("cross_infer") {
        job.infer = false;
    }
    let mut merges = rng.below(4);
    let typed_merge = job.infer || f.on("types");
    if typed_merge && merges > 0 && !f.on("typed_merge") {
        merges = 0;
    }
    let row_level_grp = f.on("where_rows") && merges > 0 && rng.pct(40);
    let use_where = row_level_grp || rng.pct(35);
    let use_changed = f.on("changed") && merges > 0 && !job.on_missing_delete && rng.pct(40);
    let changed_by_key = use_changed && f.on("changed_key") && rng.pct(50);

    // Attributes: names, kinds; NULL and empty names now and then.
    let mut pool: Vec<&str> = NAMES.to_vec();
    let mut kinds = BTreeMap::new();
    let mut attrs = Vec::new();
    for _ in 0..1 + rng.below(5) {
        let name = pool.remove(rng.below(pool.len()));
        attrs.push(Some(name.to_string()));
    }
    if rng.pct(15) {
        attrs.push(if rng.pct(50) {
            None
        } else {
            Some(String::new())
        });
    }
    let typed_kinds = [
        Kind::Int,
        Kind::Dec,
        Kind::Date,
        Kind::Stamp,
        Kind::Odd,
        Kind::Text,
    ];
    for a in attrs.iter().chain(
        pool.iter()
            .map(|p| Some(p.to_string()))
            .collect::<Vec<_>>()
            .iter(),
    ) {
        let kind = if job.infer || f.on("types") {
            *rng.pick(&typed_kinds)
        } else {
            Kind::Text
        };
        kinds.insert(a.clone(), kind);
    }
    if f.on("types") && rng.pct(25) {
        if let Some(Some(a)) = attrs
            .iter()
            .find(|a| matches!(kinds.get(*a), Some(Kind::Int | Kind::Dec)))
        {
            let ty = match kinds[&Some(a.clone())] {
                Kind::Int => "BIGINT",
                _ => "DECIMAL(12,4)",
            };
            job.types.insert(a.clone(), ty.to_string());
            uses.insert("types");
        }
    }
    let mut g = Gen {
        rng,
        kinds,
        keys: keys.clone(),
        next_entity: 0,
        row_level_grp,
    };
    let mut rows = Vec::new();
    for _ in 0..1 + g.rng.below(6) {
        let key = g.entity();
        rows.extend(g.entity_rows(&key, &attrs, 0));
    }
    let where_g = |rng: &mut Rng| use_where.then(|| rng.below(3) as i64);
    let mut steps = vec![Step {
        merge: false,
        rows: rows.clone(),
        where_g: where_g(&mut g.rng),
        changed: None,
        changed_by_key: false,
    }];
    for stamp in 1..=merges as i64 {
        rows = delta(&mut g, rows, &mut attrs, &mut pool, stamp);
        steps.push(Step {
            merge: true,
            rows: rows.clone(),
            where_g: where_g(&mut g.rng),
            changed: (use_changed && g.rng.pct(80)).then_some(stamp),
            changed_by_key,
        });
    }
    if merges > 0 && (job.infer || !job.types.is_empty()) {
        uses.insert("typed_merge");
    }
    if cross.is_some() && job.infer {
        uses.insert("cross_infer");
    }
    if row_level_grp {
        uses.insert("where_rows");
    }
    if steps.iter().any(|s| s.changed.is_some()) {
        uses.insert("changed");
    }
    if steps.iter().any(|s| s.changed_keys().is_some()) {
        uses.insert("changed_key");
    }
    if merges > 0 && f.on("nulled") {
        uses.insert("nulled");
    }
    // Drawn after everything else, so a seed's case without twins is the case it always was.
    let join = g.rng.pct(25);
    let twins =
        f.on("key_twins") && keys.iter().any(|k| k.text) && !changed_by_key && g.rng.pct(20);
    if twins {
        let at = g.rng.below(steps.len());
        add_key_twins(&mut g, &mut steps[at], &attrs, at as i64);
        uses.insert("key_twins");
    }
    // Drawn last too: a case with a numeric value column is the text case of its seed with
    // every value made a number.
    let numeric = f.on("numeric_values") && g.rng.pct(20);
    // After that draw, so a seed's decimal case stays the case it was.
    let double = !numeric && f.on("float_values") && g.rng.pct(15);
    if double {
        make_numeric(&mut g.rng, &mut steps, &DOUBLES);
        uses.insert("float_values");
    }
    if numeric {
        make_numeric(&mut g.rng, &mut steps, &NUMERIC);
        // A narrower decimal than the source's: PostgreSQL's `27.8000` never fits it, SQLite's
        // `27.85` does and `-3.125` does not.
        for ty in job.types.values_mut().filter(|t| t.starts_with("DECIMAL")) {
            if g.rng.pct(50) {
                *ty = "DECIMAL(12,2)".into();
            }
        }
        uses.insert("numeric_values");
    }
    Case {
        seed,
        keys,
        join,
        job,
        steps,
        cross,
        values: match (numeric, double) {
            (true, _) => Column::Decimal,
            (false, true) => Column::Double,
            (false, false) => Column::Text,
        },
        uses,
    }
}

/// Every value that is not already one of `pool` ([`NUMERIC`] or [`DOUBLES`]) replaced by one,
/// the same text always by the same number (a value a delta left alone stays alone; two equal
/// texts stay a conflict of one value).
fn make_numeric(rng: &mut Rng, steps: &mut [Step], pool: &[&'static str]) {
    let texts: BTreeSet<String> = steps
        .iter()
        .flat_map(|s| s.rows.iter().filter_map(|r| r.val.clone()))
        .collect();
    let as_number: BTreeMap<String, String> = texts
        .into_iter()
        .map(|t| {
            let n = match pool.contains(&t.as_str()) {
                true => t.clone(),
                false => rng.pick(pool).to_string(),
            };
            (t, n)
        })
        .collect();
    for r in steps.iter_mut().flat_map(|s| s.rows.iter_mut()) {
        if let Some(v) = r.val.as_mut() {
            *v = as_number[v.as_str()].clone();
        }
    }
    // More conflicts, each between two numbers whose text order is not their value order
    // (`5` and `27.8`, `99` and `6771`), so a pick by text shows. A row's rival depends on
    // the row alone: an entity a delta left alone keeps its conflict.
    let n = |x: &str| x.parse::<f64>().expect("a numeral");
    let rival: BTreeMap<&str, &str> = pool
        .iter()
        .map(|&v| {
            let crossing: Vec<&str> = pool
                .iter()
                .copied()
                .filter(|&w| n(v) != n(w) && (v < w) != (n(v) < n(w)))
                .collect();
            // `0` crosses none: any other.
            let rivals = if crossing.is_empty() { pool } else { &crossing };
            (v, *rng.pick(rivals))
        })
        .collect();
    for step in steps.iter_mut() {
        let rivals: Vec<Row> = step
            .rows
            .iter()
            .filter(|r| fnv(&format!("{:?}", (&r.key, &r.attr, &r.val))) % 100 < 20)
            .filter_map(|r| {
                let v = rival[r.val.as_deref()?];
                Some(Row {
                    val: Some(v.to_string()),
                    ..r.clone()
                })
            })
            .collect();
        step.rows.extend(rivals);
    }
}

/// FNV-1a: a hash that is the same in every build (a seed stays a reproduction).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Two entities in one step only whose keys differ in the first text part by case or a
/// trailing space and in nothing else, rows alike: one key to MariaDB's and SQL Server's
/// default collations (and by case to `postgres_ci`'s), two to PostgreSQL and SQLite. The step's `where` and `changed` see
/// both alike (same `grp` and `modified`), so the run reads both or neither.
fn add_key_twins(g: &mut Gen, step: &mut Step, attrs: &[Option<String>], stamp: i64) {
    let key = g.entity();
    let trailing_space = g.rng.pct(40);
    let mut twinned = false;
    let twin: Vec<K> = key
        .iter()
        .map(|k| match k {
            K::T(t) if !twinned => {
                twinned = true;
                K::T(match trailing_space {
                    true => format!("{t} "),
                    false => t.to_uppercase(),
                })
            }
            other => other.clone(),
        })
        .collect();
    let rows = g.entity_rows(&key, attrs, stamp);
    let copies: Vec<Row> = rows
        .iter()
        .map(|r| Row {
            key: twin.clone(),
            ..r.clone()
        })
        .collect();
    step.rows.extend(rows);
    step.rows.extend(copies);
}

/// The next snapshot: values changed, rows and entities deleted, new attributes and
/// entities, each changed or new row stamped `modified = stamp`.
fn delta(
    g: &mut Gen,
    mut rows: Vec<Row>,
    attrs: &mut Vec<Option<String>>,
    pool: &mut Vec<&str>,
    stamp: i64,
) -> Vec<Row> {
    for r in rows.iter_mut() {
        if r.val.is_some() && g.rng.pct(25) {
            let kind = g.kinds.get(&r.attr).copied().unwrap_or(Kind::Text);
            r.val = Some(value(&mut g.rng, kind));
            r.modified = stamp;
            if g.row_level_grp {
                r.grp = g.rng.below(3) as i64;
            }
        }
    }
    rows.retain(|_| !g.rng.pct(8));
    if g.rng.pct(20) {
        if let Some(victim) = rows.first().map(|r| r.key.clone()) {
            rows.retain(|r| r.key != victim);
        }
    }
    let entities: Vec<Vec<K>> = rows
        .iter()
        .map(|r| r.key.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if g.rng.pct(40) && !pool.is_empty() {
        let name = Some(pool.remove(g.rng.below(pool.len())).to_string());
        for e in &entities {
            if g.rng.pct(60) {
                let grp = rows.iter().find(|r| &r.key == e).map_or(0, |r| r.grp);
                rows.extend(g.cell(e, &name, grp, stamp));
            }
        }
        attrs.push(name);
    }
    if g.rng.pct(40) {
        let key = g.entity();
        let some: Vec<Option<String>> = attrs.iter().filter(|_| g.rng.pct(60)).cloned().collect();
        let some = if some.is_empty() { attrs.clone() } else { some };
        rows.extend(g.entity_rows(&key, &some, stamp));
    }
    rows
}
