//! Damage a conversion to plain text leaves behind: brackets that never close,
//! symbols standing where a question mark or apostrophe was, markup and chat
//! text that were never meant to be printed, doubled words, headings run into
//! their paragraph, lists run into one line, and tables flattened to one cell
//! per line.

use std::ops::Range;

use crate::finding::{Finding, codes};
use crate::headings::clip;
use crate::lines::{self, Line};

/// Byte ranges of the words (letters, digits and inner `-./'`) of `t`.
fn words(t: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in t.char_indices() {
        let part = c.is_alphanumeric() || (start.is_some() && "-./'’".contains(c));
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(s..t.len());
    }
    // A word does not end in punctuation ("off." is "off").
    for w in &mut out {
        while w.end > w.start && t[..w.end].ends_with(['-', '.', '/', '\'', '’']) {
            w.end -= t[..w.end].chars().next_back().map_or(1, char::len_utf8);
        }
    }
    out.retain(|w| w.end > w.start);
    out
}

/// Words repeated back to back ("Total Total"). Digits and dice ("D3 D3") are
/// lists of rolls, not slips.
pub fn doubled_words(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.text();
        let ws = words(t);
        for pair in ws.windows(2) {
            let (a, b) = (&t[pair[0].clone()], &t[pair[1].clone()]);
            let between = &t[pair[0].end..pair[1].start];
            if a == b
                && between == " "
                && a.chars().count() >= 2
                && a.chars().all(char::is_alphabetic)
            {
                out.push(
                    Finding::warning(
                        codes::DOUBLED_WORD,
                        l.sub_span(pair[0].start..pair[1].end),
                        format!("\"{a}\" is printed twice in a row"),
                        "doubled word",
                    )
                    .with_help("Delete one of them, or restore the heading or table cell that was merged here."),
                );
            }
        }
    }
    out
}

/// `a)`, `1)`, `(f)`-style marks inside prose close nothing.
fn is_mark_close(t: &str, close: usize) -> bool {
    let before = &t[..close];
    let token_start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || c == '(' || c == '"')
        .map_or(0, |(i, c)| i + c.len_utf8());
    let token = &before[token_start..];
    !token.is_empty() && token.chars().count() <= 2 && token.chars().all(char::is_alphanumeric)
}

/// Brackets opened and never closed (or closed and never opened) within one
/// paragraph, and curly quotes that do not pair up.
pub fn unbalanced(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.text();
        if lines::is_table_row(t) {
            continue;
        }
        let mut stack: Vec<(usize, char)> = Vec::new();
        let mut stray: Vec<(usize, char)> = Vec::new();
        for (i, c) in t.char_indices() {
            match c {
                '(' | '[' => stack.push((i, c)),
                ')' | ']' => {
                    let open = if c == ')' { '(' } else { '[' };
                    if stack.last().is_some_and(|&(_, o)| o == open) {
                        stack.pop();
                    } else if let Some(k) = stack.iter().rposition(|&(_, o)| o == open) {
                        stack.truncate(k);
                    } else if !(c == ')' && is_mark_close(t, i)) {
                        stray.push((i, c));
                    }
                }
                _ => {}
            }
        }
        for &(i, c) in &stack {
            let shown = clip(&t[i..], 40);
            out.push(
                Finding::warning(
                    codes::UNBALANCED,
                    l.sub_span(i..i + 1),
                    format!("\"{c}\" opens \"{shown}\" and nothing in the paragraph closes it"),
                    "never closed",
                )
                .with_help(
                    "Close the bracket where the aside ends; text may have been lost after it.",
                ),
            );
        }
        for &(i, c) in &stray {
            let from = t[..i].char_indices().rev().nth(30).map_or(0, |(p, _)| p);
            let shown = &t[from..i + 1];
            out.push(
                Finding::warning(
                    codes::UNBALANCED,
                    l.sub_span(i..i + 1),
                    format!("\"{c}\" closes \"…{shown}\" but nothing in the paragraph opened it"),
                    "never opened",
                )
                .with_help(
                    "Add the opening bracket where the aside starts, or delete the stray one.",
                ),
            );
        }
        let open = t.matches('“').count();
        let close = t.matches('”').count();
        if open != close
            && let Some(i) = t.find(if open > close { '“' } else { '”' })
        {
            out.push(
                Finding::warning(
                    codes::UNBALANCED,
                    l.sub_span(i..i + '“'.len_utf8()),
                    format!("{open} opening and {close} closing quotation marks in one paragraph"),
                    "unpaired quote",
                )
                .with_help("Pair the quotation marks; the quoted name or sentence may be cut."),
            );
        }
    }
    out
}

/// Symbols standing in for lost characters: a bullet where a question mark was
/// ("casualties•"), a full stop or comma where an apostrophe was ("RPG.s"),
/// asterisks where a decimal point was ("*50mm"), a hyphen where a question
/// mark ended a sentence before a run-in number ("man- 3.").
pub fn stray_symbols(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.text();
        let mut hits: Vec<(Range<usize>, &str)> = Vec::new();
        let chars: Vec<(usize, char)> = t.char_indices().collect();
        for (k, &(i, c)) in chars.iter().enumerate() {
            let prev = k.checked_sub(1).map(|p| chars[p].1);
            let next = chars.get(k + 1).map(|&(_, n)| n);
            let next2 = chars.get(k + 2).map(|&(_, n)| n);
            match c {
                '•' if k > 0 && prev.is_some_and(char::is_alphabetic) => {
                    hits.push((
                        i..i + c.len_utf8(),
                        "a bullet inside a sentence, probably a lost \"?\"",
                    ));
                }
                '.' | ',' if next == Some('s') && next2.is_none_or(|n| !n.is_alphanumeric()) => {
                    // The upper-case code right before it: "RPG.s", "12.7mmAAMG.s".
                    let caps = t[..i]
                        .chars()
                        .rev()
                        .take_while(char::is_ascii_uppercase)
                        .count();
                    if caps >= 2 {
                        hits.push((i..i + 1, "a full stop or comma before a plural \"s\", probably a lost apostrophe"));
                    }
                }
                '*' if next.is_some_and(|n| n.is_ascii_digit())
                    && prev.is_some_and(|p| p == ' ' || p == 'x') =>
                {
                    hits.push((
                        i..i + 1,
                        "an asterisk before a number, probably a lost decimal point",
                    ));
                }
                '-' if prev.is_some_and(char::is_alphabetic) && next == Some(' ') && {
                    let rest = &t[i + 2..];
                    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
                    n > 0 && rest[n..].starts_with(". ")
                } =>
                {
                    hits.push((
                        i..i + 1,
                        "a hyphen ending a sentence before a numbered item, probably a lost \"?\"",
                    ));
                }
                _ => {}
            }
        }
        // Marks of one kind close together are one slip ("1x *50mm mg 1x*30mm").
        let mut k = 0;
        while k < hits.len() {
            let mut end = hits[k].0.end;
            let mut j = k + 1;
            while j < hits.len()
                && hits[j].1 == hits[k].1
                && t[hits[j].0.clone()].starts_with('*')
                && hits[j].0.start <= end + 16
            {
                end = hits[j].0.end;
                j += 1;
            }
            let span = hits[k].0.start..end;
            let from = t[..span.start]
                .char_indices()
                .rev()
                .nth(12)
                .map_or(0, |(p, _)| p);
            let to = t[span.end..]
                .char_indices()
                .nth(12)
                .map_or(t.len(), |(p, _)| span.end + p);
            out.push(
                Finding::warning(
                    codes::STRAY_SYMBOL,
                    l.sub_span(span),
                    format!("stray symbol in \"{}\": {}", &t[from..to], hits[k].1),
                    "stray symbol",
                )
                .with_help("Restore the character the conversion replaced."),
            );
            k = j;
        }
    }
    out
}

/// Markup of the editor the text came from: GitHub call-outs ("[!NOTE]"),
/// TeX commands ("90^\circ", "\le"), HTML tags and entities.
pub fn markup(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.text();
        let b = t.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !t.is_char_boundary(i) {
                i += 1;
                continue;
            }
            let len = if t[i..].starts_with("[!") {
                let n = t[i + 2..]
                    .bytes()
                    .take_while(u8::is_ascii_uppercase)
                    .count();
                (n >= 3 && t[i + 2 + n..].starts_with(']')).then_some(n + 3)
            } else if b[i] == b'\\' || (b[i] == b'^' && b.get(i + 1) == Some(&b'\\')) {
                let s = if b[i] == b'^' { i + 2 } else { i + 1 };
                let n = t[s..].bytes().take_while(u8::is_ascii_alphabetic).count();
                (n >= 2).then_some(s + n - i)
            } else if b[i] == b'<' {
                let n = t[i + 1..]
                    .bytes()
                    .take_while(|c| c.is_ascii_alphabetic() || *c == b'/')
                    .count();
                let tag = &t[i + 1..i + 1 + n];
                (matches!(
                    tag,
                    "br" | "br/" | "b" | "/b" | "i" | "/i" | "p" | "/p" | "sup" | "/sup"
                ) && t[i + 1 + n..].starts_with('>'))
                .then_some(n + 2)
            } else if b[i] == b'&' {
                ["&nbsp;", "&amp;", "&lt;", "&gt;", "&quot;"]
                    .iter()
                    .find(|e| t[i..].starts_with(*e))
                    .map(|e| e.len())
            } else {
                None
            };
            match len {
                Some(n) => {
                    let mark = &t[i..i + n];
                    out.push(
                        Finding::warning(
                            codes::LEFTOVER_MARKUP,
                            l.sub_span(i..i + n),
                            format!("leftover markup \"{mark}\" from the document's source format"),
                            "markup",
                        )
                        .with_help("Replace it with what it stood for (a symbol, a note, a box), or delete it."),
                    );
                    i += n;
                }
                None => i += 1,
            }
        }
    }
    out
}

const CHAT_VERBS: &[&str] = &[
    "noted",
    "asked",
    "mentioned",
    "said",
    "pointed out",
    "suggested",
    "wondered",
    "wrote",
];

/// Lines of a conversation with an assistant left in the rules ("You noted:",
/// "As you pointed out, ...").
pub fn chat(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.text();
        let rest = t.strip_prefix("As you ").or_else(|| t.strip_prefix("You "));
        let Some(rest) = rest else { continue };
        // "You astutely asked": one adverb may sit before the verb.
        let after_adverb = rest
            .split_once(' ')
            .filter(|(w, _)| w.ends_with("ly"))
            .map_or(rest, |(_, r)| r);
        if let Some(v) = CHAT_VERBS.iter().find(|v| after_adverb.starts_with(*v)) {
            let end = t.len() - after_adverb.len() + v.len();
            let end = if t[end..].starts_with([':', ',']) {
                end + 1
            } else {
                end
            };
            out.push(
                Finding::warning(
                    codes::CHAT_TEXT,
                    l.sub_span(0..end),
                    format!(
                        "\"{}\" addresses the reader of a conversation, not a player",
                        &t[..end]
                    ),
                    "conversation text",
                )
                .with_help("Delete the exchange and keep only the rule it led to."),
            );
        }
    }
    out
}

/// A list typed into one paragraph ("…as follows: * First … * Second", "…: 1. A … 2. B",
/// "…: - A … - B"): the items lost their lines in conversion.
pub fn run_in_lists(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.text();
        if lines::is_table_row(t) {
            continue;
        }
        let mut found = None;
        for (i, _) in t.match_indices(": ") {
            let rest = &t[i + 2..];
            let bullet = (rest.starts_with("* ") || rest.starts_with("- "))
                && rest[2..].starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit());
            let numbered = rest.starts_with("1. ") && rest.contains(" 2. ");
            if bullet || numbered {
                found = Some((i, if numbered { 4 } else { 3 }));
                break;
            }
        }
        if let Some((i, n)) = found {
            out.push(
                Finding::warning(
                    codes::RUN_IN_LIST,
                    l.sub_span(i..i + n),
                    "a list is run into one paragraph: its items lost their line breaks",
                    "list starts here",
                )
                .with_help(
                    "Put each item on its own line so steps and modifiers can be told apart.",
                ),
            );
        }
    }
    out
}

/// Sentence openers that follow a run-in heading ("Reinforce The two players ...").
const OPENERS: &[&str] = &[
    "The", "Any", "All", "Each", "Every", "If", "When", "A", "An", "This", "These", "Units", "You",
    "Your", "Players", "Once",
];

/// Words before an upper-case word that make it emphasis, not a heading.
const ARTICLES: &[&str] = &[
    "the", "a", "an", "The", "A", "An", "of", "to", "for", "and", "or",
];

fn caps_word(w: &str) -> bool {
    w.chars().count() >= 2 && w.chars().all(|c| c.is_ascii_uppercase())
}

/// Headings that lost their line break and now start the paragraph they head:
/// a title word followed by a capitalised sentence ("Move All of your units"),
/// or an upper-case title inside a paragraph ("... taken off. MORALE If you").
pub fn run_in_headings(lines: &[Line<'_>], skip: &dyn Fn(usize) -> bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let push = |out: &mut Vec<Finding>, l: &Line<'_>, span: Range<usize>, title: &str| {
        out.push(
            Finding::warning(
                codes::RUN_IN_HEADING,
                l.sub_span(span),
                format!("heading \"{title}\" is run into its paragraph"),
                "heading run in",
            )
            .with_help(
                "Put the heading on its own line so the rule it starts can be found and cited.",
            ),
        );
    };
    for (idx, l) in lines.iter().enumerate() {
        let t = l.text();
        if skip(idx) || t.len() < 60 || lines::is_table_row(t) || lines::bullet_body(t).is_some() {
            continue;
        }
        let ws = words(t);
        // "Reinforce The two players ..."
        for k in 1..=2usize {
            if ws.len() <= k + 1 {
                break;
            }
            let head = &ws[..k];
            let opener = &t[ws[k].clone()];
            let joined_by_spaces = head.windows(2).all(|p| &t[p[0].end..p[1].start] == " ")
                && &t[head[k - 1].end..ws[k].start] == " ";
            let head_ok = head.iter().all(|w| {
                let s = &t[w.clone()];
                s.chars().all(char::is_alphabetic)
                    && s.chars().next().is_some_and(char::is_uppercase)
                    && !OPENERS.contains(&s)
            });
            let next_lower = t[ws[k + 1].clone()]
                .chars()
                .next()
                .is_some_and(char::is_lowercase);
            if joined_by_spaces && head_ok && OPENERS.contains(&opener) && next_lower {
                push(&mut out, l, 0..head[k - 1].end, &t[..head[k - 1].end]);
                break;
            }
        }
        // "... MORALE If you ...", "... sequence MELEE (1 Action) D10 ..."
        let mut k = 0;
        while k < ws.len() {
            if !caps_word(&t[ws[k].clone()]) {
                k += 1;
                continue;
            }
            let mut j = k;
            while j + 1 < ws.len()
                && caps_word(&t[ws[j + 1].clone()])
                && &t[ws[j].end..ws[j + 1].start] == " "
            {
                j += 1;
            }
            let run = ws[k].start..ws[j].end;
            let longest = (k..=j).map(|x| ws[x].len()).max().unwrap_or(0);
            let prev_ok = k == 0 || !ARTICLES.contains(&&t[ws[k - 1].clone()]);
            let after = &t[run.end..];
            // "MELEE (1 Action) D10 ...": a bracket, then the paragraph.
            let bracketed = after.starts_with(" (")
                && after.find(')').is_some_and(|p| {
                    after[p + 1..]
                        .trim_start()
                        .starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit())
                });
            let next_title = bracketed
                || (after.starts_with(' ')
                    && ws.get(j + 1).is_some_and(|w| {
                        w.start == run.end + 1 && {
                            let s = &t[w.clone()];
                            s.chars().next().is_some_and(char::is_uppercase)
                                && s.chars().skip(1).any(char::is_lowercase)
                        }
                    }));
            if j - k < 3 && longest >= 5 && prev_ok && next_title {
                push(&mut out, l, run.clone(), &t[run]);
            }
            k = j + 1;
        }
    }
    out
}

/// Lines that hold one table cell each (a table flattened in conversion):
/// many short lines in a row, a good share of them numbers.
pub fn flattened_tables(lines: &[Line<'_>]) -> (Vec<Finding>, Vec<Range<usize>>) {
    let mut out = Vec::new();
    let mut regions = Vec::new();
    let cell = |l: &Line<'_>| {
        let t = l.text();
        !t.is_empty() && t.chars().count() <= 14 && !lines::is_table_row(t)
    };
    let numeric = |l: &Line<'_>| {
        l.text()
            .chars()
            .all(|c| c.is_ascii_digit() || "*/.+-–½ ".contains(c))
    };
    let mut i = 0;
    while i < lines.len() {
        if !cell(&lines[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < lines.len() && cell(&lines[j]) {
            j += 1;
        }
        let n = j - i;
        let nums = lines[i..j].iter().filter(|l| numeric(l)).count();
        if n >= 12 && nums * 5 >= n * 2 {
            let first = &lines[i];
            out.push(
                Finding::warning(
                    codes::FLATTENED_TABLE,
                    first.text_span(),
                    format!(
                        "lines {} to {} hold one value each: a table flattened to one cell per line",
                        first.number(),
                        lines[j - 1].number()
                    ),
                    "flattened table",
                )
                .with_help("Rebuild the table with one row per line and its columns separated, so each value sits under its heading."),
            );
            regions.push(i..j);
        }
        i = j;
    }
    (out, regions)
}

/// The last paragraph of the text stops without ending its sentence.
pub fn truncated_end(lines: &[Line<'_>]) -> Vec<Finding> {
    let Some(last) = lines.iter().rev().find(|l| !l.is_blank()) else {
        return Vec::new();
    };
    let t = last.text();
    if t.chars().count() < 100 || lines::is_table_row(t) {
        return Vec::new();
    }
    if t.ends_with(['.', '!', '?', ':', ';', ')', ']', '"', '”', '\'']) {
        return Vec::new();
    }
    let from = t.char_indices().rev().nth(30).map_or(0, |(p, _)| p);
    vec![
        Finding::warning(
            codes::TRUNCATED,
            last.sub_span(from..t.len()),
            format!("the text ends mid-sentence: \"…{}\"", &t[from..]),
            "text stops here",
        )
        .with_help("Check the source for the rest of the text."),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans<'t>(text: &'t str, f: &[Finding]) -> Vec<&'t str> {
        f.iter().map(|f| &text[f.span.clone()]).collect()
    }

    #[test]
    fn doubled_words_but_not_dice() {
        let text = "Count the the markers. Roll D6 D6 and 2 2.\n";
        let f = doubled_words(&lines::split(text));
        assert_eq!(spans(text, &f), vec!["the the"]);
    }

    #[test]
    fn brackets_that_never_close_or_open() {
        let text = "Pick a crew (two gunners (one spare) and a loader.\nThree mules)carry it.\nOptions a) and b) apply (both).\nA “quoted name.\n";
        let f = unbalanced(&lines::split(text));
        assert_eq!(f.len(), 3, "{f:#?}");
        assert_eq!(&text[f[0].span.clone()], "(");
        assert!(f[0].message.contains("(two gunners"));
        assert!(f[1].message.contains("mules)"));
        assert!(f[2].message.contains("1 opening and 0 closing"));
    }

    #[test]
    fn stray_symbols_for_lost_characters() {
        let text = "Do they retreat• If not, the APC,s and HMG.s fire (1x *50mm mg 1x*30mm mg). Ready- 3. Go. Off-board and on- or off-table.\n";
        let f = stray_symbols(&lines::split(text));
        assert_eq!(spans(text, &f), vec!["•", ",", ".", "*50mm mg 1x*", "-"]);
    }

    #[test]
    fn markup_left_in_the_text() {
        let text = "[!NOTE] Keep it.\nA 90^\\circ arc, range (\\le 3\") and x<br>y, [!] [a].\n";
        let f = markup(&lines::split(text));
        assert_eq!(spans(text, &f), vec!["[!NOTE]", "^\\circ", "\\le", "<br>"]);
    }

    #[test]
    fn conversation_lines() {
        let text = "You noted: \"maybe\".\nYou astutely asked: why?\nAs you pointed out, medics heal.\nYou may move twice.\n";
        let f = chat(&lines::split(text));
        assert_eq!(
            spans(text, &f),
            vec!["You noted:", "You astutely asked:", "As you pointed out,"]
        );
    }

    #[test]
    fn lists_run_into_a_paragraph() {
        let text = "Costs: * Standard: 1 CP. * Surcharge: 2 CP.\nSteps: 1. Aim. 2. Fire.\nModifiers: - Cover: -1. - Night: -2.\nRange: 12 inches. Note: - see above.\n";
        let f = run_in_lists(&lines::split(text));
        assert_eq!(f.len(), 3, "{f:#?}");
    }

    #[test]
    fn headings_run_into_paragraphs() {
        let text = "Move All of your units may move according to their speed in this phase.\nThe Move phase follows: all units may move up to their speed in inches.\nYou lose the game when your last figure is taken off. MORALE If you lose lives, fall back.\nThe FIRST American attempt to fire needs a roll of one to four on the die.\n";
        let f = run_in_headings(&lines::split(text), &|_| false);
        assert_eq!(spans(text, &f), vec!["Move", "MORALE"]);
    }

    #[test]
    fn flattened_table_is_found_once() {
        let mut text = String::from("Stats\n");
        for row in [
            ["Name", "SPD", "ACC"],
            ["Scout", "6", "2"],
            ["Tank", "2", "4"],
            ["Gun", "0", "5"],
            ["Jeep", "8", "1"],
        ] {
            for c in row {
                text.push_str(c);
                text.push('\n');
            }
        }
        let (f, regions) = flattened_tables(&lines::split(&text));
        assert_eq!(f.len(), 1);
        assert_eq!(regions, vec![0..16]);
        let (f, _) = flattened_tables(&lines::split("Move\nFire\nRally\nRest\n"));
        assert!(f.is_empty());
    }

    #[test]
    fn text_ending_mid_sentence() {
        let long = "Artillery types are white phosphorus, high explosive, smoke and the rocket barrages that the";
        let text = format!("Intro.\n\n{long} batteries\n");
        assert_eq!(truncated_end(&lines::split(&text)).len(), 1);
        assert!(truncated_end(&lines::split(&format!("{long} batteries fire.\n"))).is_empty());
    }
}
