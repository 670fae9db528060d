//! How a database spells the pieces of hand-built SQL that the pivot's own statements never
//! need: string functions, integer arithmetic, ordered string aggregation, recursive common
//! table expressions, and how many tables one join may hold.
//!
//! Data, one value per dialect ([`super::Script::spelling`]), read by code above the dialects
//! (the in-database transforms) that composes its queries from these pieces and never asks
//! which database it is on. A dialect without a [`Spelling`] simply has no such queries.

/// String concatenation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concat {
    /// An infix operator: `a || b`.
    Operator(&'static str),
    /// `CONCAT(a, b, …)`.
    Function,
}

/// The 1-based position of one string in another, 0 when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// `f(haystack, needle)` (`instr`, `strpos`).
    HaystackFirst(&'static str),
    /// `f(needle, haystack)` (`CHARINDEX`).
    NeedleFirst(&'static str),
}

/// Integer division of non-negative operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntegerDivision {
    /// `/` divides integers as integers.
    Slash,
    /// `/` gives a decimal; the `DIV` operator divides integers.
    DivOperator,
    /// `/` gives a decimal and there is no integer division: `TRUNC(a / b)`.
    TruncatedSlash,
}

/// The concatenation of an expression over a group, in a given order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderedConcat {
    /// `f(expr, '' ORDER BY i)`: SQLite's `group_concat`, PostgreSQL's `string_agg`.
    SeparatorArgument(&'static str),
    /// `GROUP_CONCAT(expr ORDER BY i SEPARATOR '')`.
    SeparatorClause,
    /// `LISTAGG(expr) WITHIN GROUP (ORDER BY i)`.
    WithinGroup,
    /// No ordered aggregate that runs everywhere it must: one `MAX(CASE WHEN i = k THEN expr
    /// END)` per position, joined by this operator.
    CasePerPosition(&'static str),
}

/// The spelling of one database; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    pub concat: Concat,
    /// The substring function, called `f(s, position, length)`.
    pub substring: &'static str,
    pub position: Position,
    pub integer_division: IntegerDivision,
    /// The remainder is `MOD(a, b)` (no `%` operator).
    pub modulo_function: bool,
    /// What a SELECT of constants reads from: nothing, or ` FROM dual`.
    pub constant_from: &'static str,
    /// The type a `CAST` to a signed integer names.
    pub cast_integer: &'static str,
    pub ordered_concat: OrderedConcat,
    /// A recursive common table expression's `WITH`: `WITH RECURSIVE`, or `WITH` alone.
    pub with_recursive: &'static str,
    /// In `INSERT … SELECT` the `WITH` clause comes before the `INSERT`.
    pub with_before_insert: bool,
    /// A recursive member must give a text column the anchor's very type, so both are
    /// converted to `VARCHAR(n)`.
    pub recursive_text_converted: bool,
    /// A small table of constants is written inline, `(VALUES (1), (2)) AS t(k)`, rather than
    /// as a common table expression (what recursive members are safest reading here).
    pub inline_constants: bool,
    /// The most tables one SELECT may join, and why; None: no limit.
    pub max_join_tables: Option<(usize, &'static str)>,
    /// Appended to a recursive statement deeper than 100 levels to lift the engine's default
    /// recursion limit (T-SQL's `OPTION (MAXRECURSION 0)`); empty where the default is no
    /// limit or far above any grid's blanks.
    pub lift_recursion_limit: &'static str,
}

impl Spelling {
    pub fn concat(&self, parts: &[&str]) -> String {
        match self.concat {
            Concat::Operator(op) => parts.join(&format!(" {op} ")),
            Concat::Function => format!("CONCAT({})", parts.join(", ")),
        }
    }

    pub fn substring(&self, s: &str, pos: &str, len: &str) -> String {
        format!("{}({s}, {pos}, {len})", self.substring)
    }

    /// 1-based position of `needle` in `hay`, 0 when absent.
    pub fn position(&self, needle: &str, hay: &str) -> String {
        match self.position {
            Position::HaystackFirst(f) => format!("{f}({hay}, {needle})"),
            Position::NeedleFirst(f) => format!("{f}({needle}, {hay})"),
        }
    }

    /// Integer division of non-negative `a` by `b` (truncating is flooring).
    pub fn div(&self, a: &str, b: usize) -> String {
        match self.integer_division {
            IntegerDivision::Slash => format!("({a}) / {b}"),
            IntegerDivision::DivOperator => format!("({a}) DIV {b}"),
            IntegerDivision::TruncatedSlash => format!("TRUNC(({a}) / {b})"),
        }
    }

    /// The remainder of `a` divided by `b`.
    pub fn modulo(&self, a: &str, b: usize) -> String {
        match self.modulo_function {
            true => format!("MOD({a}, {b})"),
            false => format!("{a} % {b}"),
        }
    }

    /// `expr` as a signed integer.
    pub fn int(&self, expr: &str) -> String {
        format!("CAST({expr} AS {})", self.cast_integer)
    }

    /// The concatenation of `expr` over a group, in the order of `index` (1..=`count`, each
    /// once per group).
    pub fn ordered_concat(&self, expr: &str, index: &str, count: usize) -> String {
        match self.ordered_concat {
            OrderedConcat::SeparatorArgument(f) => format!("{f}({expr}, '' ORDER BY {index})"),
            OrderedConcat::SeparatorClause => {
                format!("GROUP_CONCAT({expr} ORDER BY {index} SEPARATOR '')")
            }
            OrderedConcat::WithinGroup => {
                format!("LISTAGG({expr}) WITHIN GROUP (ORDER BY {index})")
            }
            OrderedConcat::CasePerPosition(op) => {
                let cells: Vec<String> = (1..=count)
                    .map(|k| format!("MAX(CASE WHEN {index} = {k} THEN {expr} END)"))
                    .collect();
                cells.join(&format!("\n    {op} "))
            }
        }
    }

    /// A recursive member's text column of at most `chars` characters.
    pub fn recursive_text(&self, expr: &str, chars: usize) -> String {
        match self.recursive_text_converted {
            true => format!("CONVERT(VARCHAR({chars}), {expr})"),
            false => expr.to_string(),
        }
    }

    /// `INSERT … WITH … SELECT`, or `WITH … INSERT … SELECT` where the `WITH` goes first.
    pub fn insert_with(
        &self,
        insert: &str,
        ctes: &[String],
        select: &str,
        recursive: bool,
    ) -> String {
        let with = match recursive {
            true => self.with_recursive,
            false => "WITH",
        };
        match self.with_before_insert {
            true => format!("WITH {}\n{insert}\n{select}", ctes.join(",\n")),
            false => format!("{insert}\n{with} {}\n{select}", ctes.join(",\n")),
        }
    }
}
