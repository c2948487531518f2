//! Numbers that contradict each other in plain text: a scale stated once
//! ("2 cm = 11 m", "1 inch = 10 meters") and later figures given in both units
//! ("125cm (640 metres)") that do not follow it.

use crate::finding::{Finding, codes};
use crate::lines::Line;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Mm,
    Cm,
    M,
    Km,
    Inch,
    Foot,
    Yard,
}

fn unit(word: &str) -> Option<Unit> {
    Some(match word.to_lowercase().as_str() {
        "mm" => Unit::Mm,
        "cm" | "centimetre" | "centimetres" | "centimeter" | "centimeters" => Unit::Cm,
        "m" | "metre" | "metres" | "meter" | "meters" => Unit::M,
        "km" | "kilometre" | "kilometres" | "kilometer" | "kilometers" => Unit::Km,
        "in" | "inch" | "inches" | "\"" => Unit::Inch,
        "ft" | "foot" | "feet" | "'" => Unit::Foot,
        "yd" | "yard" | "yards" => Unit::Yard,
        _ => return None,
    })
}

/// A number with its unit at byte `at` of `t`: (value, decimals, end).
fn quantity(t: &str, at: usize) -> Option<(f64, usize, Unit, usize)> {
    let s = &t[at..];
    let n = s
        .char_indices()
        .take_while(|&(i, c)| {
            c.is_ascii_digit()
                || (c == '.' && i > 0 && s[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
        })
        .count();
    if n == 0 {
        return None;
    }
    let num = &s[..n];
    let value: f64 = num.parse().ok()?;
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len());
    let rest = &s[n..];
    let gap = rest.len() - rest.trim_start_matches(' ').len();
    let rest = &rest[gap..];
    let ulen = rest
        .char_indices()
        .take_while(|&(_, c)| c.is_ascii_alphabetic())
        .count();
    let u = unit(&rest[..ulen])?;
    Some((value, decimals, u, at + n + gap + ulen))
}

/// Starts of the numbers in `t` (not digits inside words such as "M72").
fn number_starts(t: &str) -> Vec<usize> {
    let b = t.as_bytes();
    (0..b.len())
        .filter(|&i| {
            b[i].is_ascii_digit()
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.'))
        })
        .collect()
}

/// A stated scale: "2CM EQUALS 11 METRES", "1 inch = 10 meters".
fn scales(lines: &[Line<'_>]) -> Vec<(Unit, f64, Unit)> {
    let mut out: Vec<(Unit, f64, Unit)> = Vec::new();
    for l in lines {
        let t = l.text();
        for at in number_starts(t) {
            let Some((a, _, ua, end)) = quantity(t, at) else {
                continue;
            };
            let rest = &t[end..];
            let lc = rest.to_lowercase();
            let Some(skip) = [" = ", " equals ", " equal to ", " represents "]
                .iter()
                .find(|p| lc.starts_with(*p))
                .map(|p| p.len())
            else {
                continue;
            };
            if let Some((b, _, ub, _)) = quantity(t, end + skip)
                && ua != ub
                && a > 0.0
                && !out.iter().any(|&(x, _, y)| x == ua && y == ub)
            {
                out.push((ua, b / a, ub));
            }
        }
    }
    out
}

/// Figures given twice, "125cm (640 metres)", checked against the stated scale.
pub fn conversions(lines: &[Line<'_>]) -> Vec<Finding> {
    let scales = scales(lines);
    let mut out = Vec::new();
    if scales.is_empty() {
        return out;
    }
    for l in lines {
        let t = l.text();
        for at in number_starts(t) {
            let Some((x, xd, ux, end)) = quantity(t, at) else {
                continue;
            };
            let rest = &t[end..];
            let open = rest.len() - rest.trim_start().len();
            if !rest[open..].starts_with('(') {
                continue;
            }
            let inner = end + open + 1;
            let inner = inner + (t[inner..].len() - t[inner..].trim_start().len());
            let Some((y, yd, uy, yend)) = quantity(t, inner) else {
                continue;
            };
            // Either order: "125cm (640 metres)" or "5metres (1cm)".
            let (small, sd, big, bd, ratio) = match scales
                .iter()
                .find(|s| (s.0 == ux && s.2 == uy) || (s.0 == uy && s.2 == ux))
            {
                Some(&(from, r, _)) if from == ux => (x, xd, y, yd, r),
                Some(&(_, r, _)) => (y, yd, x, xd, r),
                None => continue,
            };
            // The first figure may be rounded to its printed precision, or be 3% off.
            let expect_small = big / ratio;
            let slack = (0.5 * 10f64.powi(-(sd as i32))).max(0.03 * expect_small);
            let expect_big = small * ratio;
            let slack_big = (0.5 * 10f64.powi(-(bd as i32))).max(0.03 * expect_big);
            if (small - expect_small).abs() <= slack || (big - expect_big).abs() <= slack_big {
                continue;
            }
            let close = t[yend..].find(')').map_or(yend, |p| yend + p + 1);
            let shown = &t[at..close];
            out.push(
                Finding::warning(
                    codes::CONVERSION_MISMATCH,
                    l.sub_span(at..close),
                    format!(
                        "\"{shown}\" disagrees with the scale the text states ({}): {} gives {}",
                        show_scale(ratio, &scales),
                        fmt(small),
                        fmt(expect_big)
                    ),
                    "figures disagree",
                )
                .with_help("Correct one of the two figures, or check whether the scale changed."),
            );
        }
    }
    out
}

fn fmt(v: f64) -> String {
    if (v - v.round()).abs() < 0.05 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.1}")
    }
}

fn name(u: Unit) -> &'static str {
    match u {
        Unit::Mm => "mm",
        Unit::Cm => "cm",
        Unit::M => "m",
        Unit::Km => "km",
        Unit::Inch => "inch",
        Unit::Foot => "ft",
        Unit::Yard => "yd",
    }
}

fn show_scale(ratio: f64, scales: &[(Unit, f64, Unit)]) -> String {
    match scales.iter().find(|s| s.1 == ratio) {
        Some(&(a, r, b)) => format!("1 {} = {} {}", name(a), fmt(r), name(b)),
        None => String::from("its scale"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines;

    #[test]
    fn figures_that_disagree_with_the_stated_scale() {
        let text = "Scale: 2CM EQUALS 11 METRES.\nRifle 100cm (550 metres), sniper 125cm (640 metres), blast 5metres (1cm), mortar 1236cm (6000metres), M72 25cm (200metres).\n";
        let f = conversions(&lines::split(text));
        let got: Vec<&str> = f.iter().map(|f| &text[f.span.clone()]).collect();
        assert_eq!(
            got,
            vec![
                "125cm (640 metres)",
                "1236cm (6000metres)",
                "25cm (200metres)"
            ]
        );
        assert!(f[0].message.contains("1 cm = 5.5 m"), "{}", f[0].message);
    }

    #[test]
    fn no_scale_no_check() {
        let text = "Rifle 100cm (900 metres).\n";
        assert!(conversions(&lines::split(text)).is_empty());
    }
}
