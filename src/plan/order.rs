//! Column order: `natural` puts "2" before "10" and "item2" before "item10".

use std::cmp::Ordering;

/// Compare with runs of ASCII digits taken as numbers; ties fall back to plain byte order so
/// the result is total and deterministic ("02" and "2" are kept apart).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let (dx, rx) = split_digits(x);
                let (dy, ry) = split_digits(y);
                let (tx, ty) = (trim_zeros(dx), trim_zeros(dy));
                let by_value = tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                x = rx;
                y = ry;
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    s.split_at(end)
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let start = d.iter().position(|&c| c != b'0').unwrap_or(d.len());
    &d[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_sort_by_value() {
        let mut v = vec!["10", "2", "1", "item10", "item2", "Color", "02", "b", "a"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            ["1", "02", "2", "10", "Color", "a", "b", "item2", "item10"]
        );
    }

    #[test]
    fn total_order_on_equal_values() {
        assert_ne!(natural_cmp("02", "2"), Ordering::Equal);
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
    }
}
