//! Recognises the numbering marks that open a line ("Chapter 3:", "(6)", "7.",
//! "4.1.", "f)", "(f)", "A.") and knows how to print them back, so that
//! messages quote numbers the way the book prints them.

/// Words that, followed by a number, label a heading ("Chapter 9:", "Rule 2:").
/// Chapters and parts may be followed directly by a title; the others need a
/// separator, because "Step 3 of the turn is ..." is prose, not a heading.
const LABELS: &[(&str, bool)] = &[
    ("Chapter", true),
    ("Part", true),
    ("Appendix", true),
    ("Section", false),
    ("Rule", false),
    ("Step", false),
    ("Stage", false),
    ("Scenario", false),
    ("Article", false),
];

/// What makes two marks belong to the same sequence. Letter forms are merged
/// ("f)" and "(f)" are the same list, printed inconsistently); number forms are
/// not, because books commonly nest "(1)" sections over "1." steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Style {
    Labeled(&'static str),
    Paren,
    Dot,
    Close,
    Dotted(usize),
    Lower,
    Upper,
}

/// How the mark was printed around its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Paren,
    Dot,
    Close,
    Word,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub style: Style,
    pub form: Form,
    /// Ordinal value: numbers as printed, letters a=1.
    pub value: u32,
    /// Every component for dotted numbers ("4.1" -> [4, 1]); else `[value]`.
    pub path: Vec<u32>,
    /// Byte length of the mark itself ("(6)", "Chapter 9").
    pub mark_len: usize,
    /// Byte offset in the line text where the title starts.
    pub rest_at: usize,
}

impl Marker {
    pub fn show(&self) -> String {
        show(self.style, self.form, &self.path_with(self.value))
    }

    fn path_with(&self, value: u32) -> Vec<u32> {
        let mut p = self.path.clone();
        if let Some(last) = p.last_mut() {
            *last = value;
        }
        p
    }

    /// How this mark would print with another value (for "missing (6)").
    pub fn show_value(&self, value: u32) -> String {
        show(self.style, self.form, &self.path_with(value))
    }

    /// The first value of a sequence in this style.
    pub fn first_value(&self) -> u32 {
        1
    }
}

pub fn letter(value: u32, upper: bool) -> String {
    let base = if upper { b'A' } else { b'a' };
    if (1..=26).contains(&value) {
        ((base + (value - 1) as u8) as char).to_string()
    } else {
        format!("#{value}")
    }
}

pub fn show(style: Style, form: Form, path: &[u32]) -> String {
    let value = path.last().copied().unwrap_or(0);
    let core = match style {
        Style::Lower => letter(value, false),
        Style::Upper => letter(value, true),
        Style::Dotted(_) => path
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join("."),
        _ => value.to_string(),
    };
    match (style, form) {
        (Style::Labeled(word), _) => format!("{word} {core}"),
        (_, Form::Paren) => format!("({core})"),
        (_, Form::Dot) => format!("{core}."),
        (_, Form::Close) => format!("{core})"),
        (_, Form::Word) => core,
    }
}

/// Reads up to `max` ASCII digits at the start of `s`.
fn digits(s: &str, max: usize) -> Option<(u32, usize)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 || n > max {
        return None;
    }
    s[..n].parse().ok().map(|v| (v, n))
}

fn roman(s: &str) -> Option<(u32, usize)> {
    let n = s.bytes().take_while(|b| b"IVXLC".contains(b)).count();
    if n == 0 || n > 7 {
        return None;
    }
    let val = |c: u8| match c {
        b'I' => 1,
        b'V' => 5,
        b'X' => 10,
        b'L' => 50,
        _ => 100,
    };
    let bytes = &s.as_bytes()[..n];
    let mut total = 0i64;
    for (i, &c) in bytes.iter().enumerate() {
        let v = val(c);
        if bytes.get(i + 1).is_some_and(|&d| val(d) > v) {
            total -= v;
        } else {
            total += v;
        }
    }
    (total > 0).then_some((total as u32, n))
}

/// Length of the whitespace run at the start of `s`.
fn spaces(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

fn starts_title(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit() || "\"'“‘(".contains(c))
}

/// Parses the numbering mark at the start of a trimmed line.
pub fn parse(t: &str) -> Option<Marker> {
    labeled(t)
        .or_else(|| dotted(t))
        .or_else(|| parenthesised(t))
        .or_else(|| suffixed(t))
}

fn labeled(t: &str) -> Option<Marker> {
    for &(word, title_may_follow) in LABELS {
        let upper = word.to_ascii_uppercase();
        let rest = t
            .strip_prefix(word)
            .or_else(|| t.strip_prefix(upper.as_str()));
        let Some(rest) = rest else { continue };
        let Some(rest) = rest.strip_prefix(' ') else {
            continue;
        };
        let (value, n) = if word == "Appendix" {
            match rest.chars().next() {
                Some(c)
                    if c.is_ascii_uppercase()
                        && !rest[1..].starts_with(|c: char| c.is_alphabetic()) =>
                {
                    (c as u32 - 'A' as u32 + 1, 1)
                }
                _ => digits(rest, 3)?,
            }
        } else if title_may_follow {
            digits(rest, 3).or_else(|| roman(rest))?
        } else {
            digits(rest, 3)?
        };
        let mark_len = t.len() - rest.len() + n;
        let after = &t[mark_len..];
        let ok_sep = after.is_empty()
            || after.starts_with(':')
            || after.starts_with('.')
            || after.starts_with(" -")
            || after.starts_with(" –")
            || after.starts_with(" —")
            || (title_may_follow && after.starts_with(' ') && starts_title(after.trim_start()));
        if !ok_sep {
            continue;
        }
        let sep = after
            .char_indices()
            .find(|&(_, c)| !(c.is_whitespace() || ":.-–—".contains(c)))
            .map_or(after.len(), |(i, _)| i);
        return Some(Marker {
            style: Style::Labeled(word),
            form: Form::Word,
            value,
            path: vec![value],
            mark_len,
            rest_at: mark_len + sep,
        });
    }
    None
}

fn dotted(t: &str) -> Option<Marker> {
    let mut path = Vec::new();
    let mut at = 0;
    loop {
        let (v, n) = digits(&t[at..], 3)?;
        path.push(v);
        at += n;
        if t[at..].starts_with('.') && t[at + 1..].starts_with(|c: char| c.is_ascii_digit()) {
            at += 1;
        } else {
            break;
        }
    }
    if path.len() < 2 {
        return None;
    }
    let mark_len = at;
    if t[at..].starts_with('.') {
        at += 1;
    }
    let gap = spaces(&t[at..]);
    // A title must follow, or "2.5 inches" at the start of a line would count.
    if gap == 0 || !t[at + gap..].starts_with(|c: char| c.is_uppercase()) {
        return None;
    }
    Some(Marker {
        style: Style::Dotted(path.len()),
        form: Form::Word,
        value: *path.last()?,
        path,
        mark_len,
        rest_at: at + gap,
    })
}

fn parenthesised(t: &str) -> Option<Marker> {
    let inner = t.strip_prefix('(')?;
    let (style, value, n) = if let Some((v, n)) = digits(inner, 3) {
        (Style::Paren, v, n)
    } else {
        let c = inner.chars().next()?;
        if !c.is_ascii_alphabetic() {
            return None;
        }
        let style = if c.is_ascii_lowercase() {
            Style::Lower
        } else {
            Style::Upper
        };
        (style, c.to_ascii_lowercase() as u32 - 'a' as u32 + 1, 1)
    };
    let after = inner[n..].strip_prefix(')')?;
    let gap = spaces(after);
    if gap == 0 || after.trim().is_empty() {
        return None;
    }
    let mark_len = n + 2;
    Some(Marker {
        style,
        form: Form::Paren,
        value,
        path: vec![value],
        mark_len,
        rest_at: mark_len + gap,
    })
}

fn suffixed(t: &str) -> Option<Marker> {
    let (style, value, n) = if let Some((v, n)) = digits(t, 3) {
        let style = if t[n..].starts_with(')') {
            Style::Close
        } else {
            Style::Dot
        };
        (style, v, n)
    } else {
        let c = t.chars().next()?;
        if !c.is_ascii_alphabetic() || t[1..].starts_with(|c: char| c.is_alphabetic()) {
            return None;
        }
        let style = if c.is_ascii_lowercase() {
            Style::Lower
        } else {
            Style::Upper
        };
        (style, c.to_ascii_lowercase() as u32 - 'a' as u32 + 1, 1)
    };
    let after = &t[n..];
    let form = if after.starts_with(')') {
        Form::Close
    } else if after.starts_with('.') {
        Form::Dot
    } else {
        return None;
    };
    let after = &after[1..];
    let gap = spaces(after);
    if gap == 0 || after.trim().is_empty() {
        return None;
    }
    let rest = &after[gap..];
    // "a. m." or "e. g." are abbreviations; a lettered item reads like a title.
    if matches!(style, Style::Lower | Style::Upper) && form == Form::Dot && !starts_title(rest) {
        return None;
    }
    Some(Marker {
        style,
        form,
        value,
        path: vec![value],
        mark_len: n + 1,
        rest_at: n + 1 + gap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: &str) -> Option<(Style, u32, String)> {
        parse(t).map(|m| (m.style, m.value, m.show()))
    }

    #[test]
    fn recognises_common_schemes() {
        assert_eq!(
            p("Chapter 9: Guerrilla"),
            Some((Style::Labeled("Chapter"), 9, "Chapter 9".into()))
        );
        assert_eq!(p("CHAPTER IV The End").map(|x| x.1), Some(4));
        assert_eq!(p("(6) How to Fire"), Some((Style::Paren, 6, "(6)".into())));
        assert_eq!(p("7. The Scenarios"), Some((Style::Dot, 7, "7.".into())));
        assert_eq!(
            p("4.1. Tank Crew"),
            Some((Style::Dotted(2), 1, "4.1".into()))
        );
        assert_eq!(p("1.2.3 Deep"), Some((Style::Dotted(3), 3, "1.2.3".into())));
        assert_eq!(p("f) Replacement"), Some((Style::Lower, 6, "f)".into())));
        assert_eq!(
            p("(f) Battle Manual"),
            Some((Style::Lower, 6, "(f)".into()))
        );
        assert_eq!(p("A. Why"), Some((Style::Upper, 1, "A.".into())));
        assert_eq!(
            p("Rule 1: Stands"),
            Some((Style::Labeled("Rule"), 1, "Rule 1".into()))
        );
    }

    #[test]
    fn rejects_prose_and_values() {
        for t in [
            "2.5 inches inside",
            "3+ Loser killed.",
            "10",
            "Step 3 of the turn",
            "e.g. this",
            "1986. Was a year",
            "(",
            "Chapter",
            "a)",
            "Part of the rules",
        ] {
            assert_eq!(p(t), None, "{t}");
        }
    }
}
