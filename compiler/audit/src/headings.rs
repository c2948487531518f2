//! Builds the outline of a rulebook: which lines are headings or numbered
//! items, how they nest, and where their numbering breaks.
//!
//! Nesting is inferred from the order in which numbering styles appear (the
//! usual technique for legal and rules texts): a style seen before is a return
//! to that level and closes everything below it; a new style opens a deeper
//! level. A "1." heading that restarts inside a numbered section is read as a
//! nested level, which is how flattened sub-numbering usually looks in
//! converted documents.

use crate::finding::{Finding, codes};
use crate::lines::{self, Line};
use crate::numbering::{self, Marker, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A title standing on its own line.
    Heading,
    /// A numbered or lettered paragraph or list item.
    Item,
}

#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub line: usize,
    pub marker: Option<Marker>,
    pub role: Role,
    /// Text after the mark (the whole line for plain headings).
    pub title: &'a str,
    /// Started a new level or a new list rather than continuing one.
    pub opened: bool,
    /// Index (into the entries) of the entry this one sits under.
    pub parent: Option<usize>,
}

impl Entry<'_> {
    /// The words an editor would use to name this entry: the title up to the
    /// first sentence break.
    pub fn short_title(&self) -> &str {
        short_title(self.title)
    }

    pub fn describe(&self) -> String {
        match &self.marker {
            Some(m) => format!("{} {}", m.show(), clip(self.short_title(), 48)),
            None => clip(self.title, 48),
        }
    }
}

pub fn short_title(t: &str) -> &str {
    let cut = t.find(". ").map_or(t.len(), |i| i);
    t[..cut].trim_end_matches('.').trim()
}

pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{}…", cut.trim_end())
    }
}

#[derive(Debug, Default)]
pub struct Outline<'a> {
    pub entries: Vec<Entry<'a>>,
    pub findings: Vec<Finding>,
}

impl Outline<'_> {
    pub fn entry_at_line(&self, line: usize) -> Option<usize> {
        self.entries.iter().position(|e| e.line == line)
    }

    /// The chain of ancestors, outermost first.
    pub fn ancestors(&self, idx: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cur = self.entries[idx].parent;
        while let Some(p) = cur {
            out.push(p);
            cur = self.entries[p].parent;
        }
        out.reverse();
        out
    }
}

const FUNCTION_WORDS: &[&str] = &[
    "with", "from", "into", "than", "that", "this", "over", "upon", "under", "onto", "your",
    "their", "were", "when", "what", "which", "while", "about", "each", "only", "them", "then",
    "they", "will",
];

/// Whether the text after a numbering mark reads like a title rather than a
/// sentence: short, and not ending as a sentence ends.
pub fn title_like(s: &str) -> bool {
    let s = s.trim();
    s.is_empty()
        || (s.split_whitespace().count() <= 14
            && s.len() <= 110
            && !s.ends_with(['.', ',', ';', '!']))
}

/// Whether an unnumbered line has the shape of a heading ("Turn Sequence",
/// "Command Distance Thresholds:"), judged on its own.
pub fn plain_heading_shape(s: &str) -> bool {
    let s = s.trim();
    let words: Vec<&str> = s.split_whitespace().collect();
    if words.is_empty() || words.len() > 12 || s.len() > 90 {
        return false;
    }
    let first = s.trim_start_matches(['"', '\'', '“', '‘']).chars().next();
    if !first.is_some_and(char::is_uppercase) {
        return false;
    }
    if s.ends_with(['.', ',', ';', '!']) || s.contains(" = ") || s.starts_with("[") {
        return false;
    }
    // "SMU -1", "Making March Moves +1": modifier rows of a flattened table.
    let last = words[words.len() - 1];
    if !last.chars().any(char::is_alphabetic) || last.starts_with(['+', '-']) {
        return false;
    }
    let content: Vec<&str> = words
        .iter()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.chars().count() >= 4 && w.chars().next().is_some_and(char::is_alphabetic))
        .filter(|w| !FUNCTION_WORDS.contains(&w.to_lowercase().as_str()))
        .collect();
    if content.is_empty() {
        return true;
    }
    let capitalised = content
        .iter()
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .count();
    capitalised * 4 >= content.len() * 3
}

struct Counter {
    last: u32,
    seen: Vec<(u32, usize)>,
}

impl Counter {
    fn new(v: u32, entry: usize) -> Self {
        Counter {
            last: v,
            seen: vec![(v, entry)],
        }
    }
}

struct Level {
    style: Style,
    role: Role,
    counters: Vec<Counter>,
    last_entry: usize,
}

/// Number styles used both for headings and for steps keep the two apart;
/// every other style is one sequence whatever the layout of its lines.
fn role_matters(style: Style) -> bool {
    matches!(style, Style::Dot | Style::Close)
}

fn nestable(style: Style) -> bool {
    matches!(style, Style::Dot | Style::Close | Style::Paren)
}

fn noun(style: Style, role: Role) -> String {
    match (style, role) {
        (Style::Labeled(w), _) => w.to_lowercase(),
        (_, Role::Heading) => "section".into(),
        (_, Role::Item) => "item".into(),
    }
}

/// One outline pass. `toc` relaxes the checks that do not apply to a table of
/// contents, which may legitimately list only some items of a level.
pub struct Builder<'a> {
    pub outline: Outline<'a>,
    stack: Vec<Level>,
    toc: bool,
}

impl<'a> Builder<'a> {
    pub fn new(toc: bool) -> Self {
        Builder {
            outline: Outline::default(),
            stack: Vec::new(),
            toc,
        }
    }

    fn context(&self, parent: Option<usize>) -> String {
        let mut s = String::new();
        if let Some(p) = parent {
            s.push_str(&format!(" under {}", self.outline.entries[p].describe()));
        }
        if self.toc {
            s.push_str(" in the table of contents");
        }
        s
    }

    /// Whether `value` would continue the innermost open item list of `style`.
    pub fn continues_items(&self, style: Style, value: u32) -> bool {
        self.stack.iter().any(|l| {
            l.style == style
                && l.role == Role::Item
                && l.counters.last().is_some_and(|c| c.last + 1 == value)
        })
    }

    pub fn plain(&mut self, line: usize, title: &'a str) {
        // A new unnumbered heading closes any open step list beneath it.
        if let Some(i) = self
            .stack
            .iter()
            .position(|l| l.role == Role::Item && role_matters(l.style))
        {
            self.stack.truncate(i);
        }
        let parent = self.stack.last().map(|l| l.last_entry);
        self.outline.entries.push(Entry {
            line,
            marker: None,
            role: Role::Heading,
            title,
            opened: false,
            parent,
        });
    }

    pub fn numbered(&mut self, l: &Line<'a>, marker: Marker, role: Role) {
        let idx = self.outline.entries.len();
        let title = &l.text()[marker.rest_at..];
        let style = marker.style;
        let v = marker.value;
        let pos = self
            .stack
            .iter()
            .position(|lv| lv.style == style && (lv.role == role || !role_matters(style)));
        let mut opened = false;
        let mut problem: Option<Finding> = None;
        let span = match role {
            Role::Heading => l.text_span(),
            Role::Item => l.sub_span(0..marker.mark_len),
        };
        match pos {
            None => {
                let parent = self.stack.last().map(|lv| lv.last_entry);
                if v != marker.first_value() && !self.toc {
                    let missing: Vec<u32> = (1..v).collect();
                    problem = Some(
                        Finding::warning(
                            codes::NUMBERING_GAP,
                            span.clone(),
                            format!(
                                "{} {} starts a new list{}: {} missing",
                                noun(style, role),
                                marker.show(),
                                self.context(parent),
                                list_values(&marker, &missing)
                            ),
                            "list starts here",
                        )
                        .with_help("Check the source for lost items or a mistyped number."),
                    );
                }
                self.stack.push(Level {
                    style,
                    role,
                    counters: vec![Counter::new(v, idx)],
                    last_entry: idx,
                });
                opened = true;
            }
            Some(i) => {
                self.stack.truncate(i + 1);
                let parent = if i > 0 {
                    Some(self.stack[i - 1].last_entry)
                } else {
                    None
                };
                let ctx = self.context(parent);
                let entries = &self.outline.entries;
                let level = &mut self.stack[i];
                let top_last = level.counters.last().map_or(0, |c| c.last);
                if v == top_last + 1 {
                    if let Some(c) = level.counters.last_mut() {
                        c.last = v;
                        c.seen.push((v, idx));
                    }
                } else if v == marker.first_value() {
                    if role == Role::Heading && nestable(style) {
                        level.counters.push(Counter::new(v, idx));
                    } else if let Some(c) = level.counters.last_mut() {
                        *c = Counter::new(v, idx);
                    }
                    opened = true;
                } else if let Some(j) = (0..level.counters.len().saturating_sub(1))
                    .rev()
                    .find(|&j| level.counters[j].last + 1 == v)
                {
                    level.counters.truncate(j + 1);
                    level.counters[j].last = v;
                    level.counters[j].seen.push((v, idx));
                } else if let Some(c) = level.counters.last_mut() {
                    let what = noun(style, role);
                    if let Some(&(_, first)) = c.seen.iter().find(|(n, _)| *n == v) {
                        let earlier = &entries[first];
                        problem = Some(
                            Finding::warning(
                                codes::NUMBERING_DUPLICATE,
                                span.clone(),
                                format!(
                                    "{what} {} is used twice{ctx}: {} (line {}) and {} \"{}\" (line {})",
                                    marker.show(),
                                    earlier.marker.as_ref().map_or(String::new(), |m| m.show()),
                                    earlier.line + 1,
                                    marker.show(),
                                    clip(short_title(title), 48),
                                    l.number()
                                ),
                                format!("second {}", marker.show()),
                            )
                            .with_help(format!(
                                "Renumber one of them; the first is \"{}\". References to {} are ambiguous until then.",
                                earlier.describe(),
                                marker.show()
                            )),
                        );
                    } else if v < c.last {
                        problem = Some(
                            Finding::warning(
                                codes::NUMBERING_ORDER,
                                span.clone(),
                                format!(
                                    "{what} {} comes after {}{ctx}: numbering goes backwards",
                                    marker.show(),
                                    marker.show_value(c.last)
                                ),
                                "out of order",
                            )
                            .with_help("Check the order of the sections or the printed number."),
                        );
                    } else {
                        let missing: Vec<u32> = (c.last + 1..v)
                            .filter(|n| !c.seen.iter().any(|(s, _)| s == n))
                            .collect();
                        if !missing.is_empty() {
                            let jumps = if matches!(style, Style::Lower | Style::Upper) {
                                "lettering"
                            } else {
                                "numbering"
                            };
                            problem = Some(
                                Finding::warning(
                                    codes::NUMBERING_GAP,
                                    span.clone(),
                                    format!(
                                        "{} {} {}{ctx}: {jumps} jumps from {} to {}",
                                        if missing.len() == 1 { what.clone() } else { format!("{what}s") },
                                        list_values(&marker, &missing),
                                        if missing.len() == 1 { "is missing" } else { "are missing" },
                                        marker.show_value(c.last),
                                        marker.show()
                                    ),
                                    format!("follows {}", marker.show_value(c.last)),
                                )
                                .with_help("Restore the missing part or renumber; cross-references may point at the missing number."),
                            );
                        }
                    }
                    c.last = v;
                    c.seen.push((v, idx));
                }
                level.last_entry = idx;
                level.role = if role_matters(style) {
                    level.role
                } else {
                    role
                };
            }
        }
        if let Some(top) = self.stack.last_mut() {
            top.last_entry = idx;
        }
        let parent = {
            let n = self.stack.len();
            if n >= 2 {
                Some(self.stack[n - 2].last_entry)
            } else {
                None
            }
        };
        if let Some(f) = problem {
            self.outline.findings.push(f);
        }
        self.outline.entries.push(Entry {
            line: l.idx,
            marker: Some(marker),
            role,
            title,
            opened,
            parent,
        });
    }
}

fn list_values(marker: &Marker, values: &[u32]) -> String {
    let shown: Vec<String> = values.iter().map(|&v| marker.show_value(v)).collect();
    match shown.len() {
        0 => String::new(),
        1 => shown[0].clone(),
        2 => format!("{} and {}", shown[0], shown[1]),
        n if n > 4 => format!("{} to {}", shown[0], shown[n - 1]),
        _ => format!(
            "{} and {}",
            shown[..shown.len() - 1].join(", "),
            shown[shown.len() - 1]
        ),
    }
}

/// Builds the outline of the body (every line outside `skip`).
pub fn outline<'a>(lines: &[Line<'a>], skip: &dyn Fn(usize) -> bool) -> Outline<'a> {
    let blank_doc = lines::uses_blank_lines(lines);
    let mut b = Builder::new(false);
    for (i, l) in lines.iter().enumerate() {
        if skip(i) || l.is_blank() {
            continue;
        }
        let t = l.text();
        if lines::is_table_row(t) || lines::bullet_body(t).is_some() {
            continue;
        }
        if let Some(m) = numbering::parse(t) {
            let role = classify(lines, i, &m, blank_doc, &b);
            b.numbered(l, m, role);
        } else if plain_heading_shape(t) && (!blank_doc || lines::stands_alone(lines, i)) {
            b.plain(i, t);
        }
    }
    b.outline
}

fn classify(lines: &[Line<'_>], i: usize, m: &Marker, blank_doc: bool, b: &Builder<'_>) -> Role {
    let rest = &lines[i].text()[m.rest_at..];
    if !title_like(rest) {
        return Role::Item;
    }
    if matches!(m.style, Style::Labeled(_)) {
        return Role::Heading;
    }
    if blank_doc && !lines::stands_alone(lines, i) {
        return Role::Item;
    }
    // Flattened step lists: "1. Trigger:" directly followed by "2. ...".
    let neighbour = |j: usize, want: u32| {
        lines
            .get(j)
            .and_then(|l| numbering::parse(l.text()))
            .is_some_and(|n| n.style == m.style && n.value == want)
    };
    if (i > 0 && neighbour(i - 1, m.value.wrapping_sub(1))) || neighbour(i + 1, m.value + 1) {
        return Role::Item;
    }
    if role_matters(m.style) && b.continues_items(m.style, m.value) {
        return Role::Item;
    }
    Role::Heading
}

/// Identical heading lines with nothing but blank lines between them.
pub fn repeated_headings(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.text();
        if t.is_empty()
            || t.len() > 100
            || lines::is_table_row(t)
            || lines::bullet_body(t).is_some()
        {
            continue;
        }
        let Some(j) = lines::next_non_blank(lines, i) else {
            continue;
        };
        if lines[j].text() != t {
            continue;
        }
        let heading = plain_heading_shape(t)
            || numbering::parse(t).is_some_and(|m| title_like(&t[m.rest_at..]));
        if heading {
            out.push(
                Finding::warning(
                    codes::REPEATED_HEADING,
                    lines[j].text_span(),
                    format!(
                        "heading \"{t}\" is printed twice in a row (lines {} and {})",
                        l.number(),
                        lines[j].number()
                    ),
                    "repeated heading",
                )
                .with_help("Delete the duplicate line."),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Outline<'_> {
        let lines = lines::split(text);
        // Leak is fine in tests: the outline borrows from the lines' text only.
        outline(&lines, &|_| false)
    }

    fn codes_of(o: &Outline<'_>) -> Vec<&'static str> {
        o.findings.iter().map(|f| f.code).collect()
    }

    #[test]
    fn gap_in_sections_is_reported_with_neighbours() {
        let text = "(1) One\n\nText.\n\n(2) Two\n\nText.\n\n(4) Four\n\nText.\n";
        let o = run(text);
        assert_eq!(codes_of(&o), vec![codes::NUMBERING_GAP]);
        assert!(
            o.findings[0]
                .message
                .contains("section (3) is missing: numbering jumps from (2) to (4)")
        );
        assert_eq!(&text[o.findings[0].span.clone()], "(4) Four");
    }

    #[test]
    fn duplicate_section_number() {
        let text = "(1) One\n\nx.\n\n(2) Two\n\nx.\n\n(2) Again\n\nx.\n";
        let o = run(text);
        assert_eq!(codes_of(&o), vec![codes::NUMBERING_DUPLICATE]);
    }

    #[test]
    fn repeated_letter_in_mixed_forms_is_a_duplicate() {
        let text = "(1) Equipment\n\na) Board. Text.\n\nb) Dice. Text.\n\nb) Cards. Text.\n\n(b) Manual. Text.\n";
        let o = run(text);
        let dups = o
            .findings
            .iter()
            .filter(|f| f.code == codes::NUMBERING_DUPLICATE)
            .count();
        assert_eq!(dups, 2, "{:#?}", o.findings);
        assert!(o.findings[1].message.contains("under (1) Equipment"));
    }

    #[test]
    fn letters_restart_under_each_section_and_steps_under_each_letter() {
        let text = "(1) A\n\na) x. y.\n\n1. Step one.\n2. Step two.\n\nb) z. w.\n\n1. Step one.\n\n(2) B\n\na) q. r.\n";
        assert!(run(text).findings.is_empty());
    }

    #[test]
    fn numbered_steps_inside_sections_are_not_sections() {
        let text = "Chapter 1: Basics\n\n1. Scale\n\nText here.\n\n1. Do this: now.\n2. Then that.\n\n2. Movement\n\nText.\n\nChapter 2: More\n\n1. Again\n\nText.\n";
        let o = run(text);
        assert!(o.findings.is_empty(), "{:#?}", o.findings);
    }

    #[test]
    fn chapter_numbered_twice() {
        let text =
            "Chapter 1: A\n\nx.\n\nChapter 2: B\n\nx.\n\nChapter 2: C\n\nx.\n\nChapter 3: D\n";
        let o = run(text);
        assert_eq!(codes_of(&o), vec![codes::NUMBERING_DUPLICATE]);
        assert!(
            o.findings[0]
                .message
                .starts_with("chapter Chapter 2 is used twice")
        );
    }

    #[test]
    fn backwards_numbering() {
        let text = "1. A\n\nx.\n\n2. B\n\nx.\n\n3. C\n\nx.\n\n5. E\n\nx.\n\n4. D\n\nx.\n";
        let o = run(text);
        assert_eq!(
            codes_of(&o),
            vec![codes::NUMBERING_GAP, codes::NUMBERING_ORDER]
        );
    }

    #[test]
    fn repeated_heading_line() {
        let text = "Contents\n\nContents\n\n• (1) A\n";
        let f = repeated_headings(&lines::split(text));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].span, 10..18);
    }

    #[test]
    fn plain_heading_shapes() {
        assert!(plain_heading_shape("Turn Sequence"));
        assert!(plain_heading_shape("Command Distance Thresholds:"));
        assert!(!plain_heading_shape("SMU -1"));
        assert!(!plain_heading_shape("Regular - Kneeling and aiming gun"));
        assert!(!plain_heading_shape("Units move here."));
    }
}
