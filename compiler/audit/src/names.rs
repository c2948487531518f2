//! Names: things the rules use that the text never defines (a die, a table, a
//! manual, a phase, a table column, an action), and one name spelled two ways
//! (a stat abbreviation that differs from the stat line's, a word with a
//! letter more or less, a code written joined and spaced).

use std::collections::HashMap;
use std::ops::Range;

use crate::finding::{Finding, codes};
use crate::headings::{Outline, Role};
use crate::lines::{self, Line};

/// Nouns that name a component or a reference the text should contain.
const THINGS: &[&str] = &["Table", "Chart", "Matrix", "Die", "Dice", "Manual"];

/// Words before "die"/"dice" that describe a die rather than name one.
const DIE_WORDS: &[&str] = &[
    "different",
    "colour",
    "color",
    "same",
    "second",
    "first",
    "two",
    "one",
    "ten-sided",
    "six-sided",
    "other",
    "your",
    "each",
    "extra",
    "standard",
    "small",
    "single",
    "the",
    "a",
    "his",
    "her",
    "their",
    "its",
    "normal",
    "red",
    "white",
    "black",
    "green",
    "blue",
    "two",
    "three",
    "another",
    "this",
    "that",
    "sided",
    "average",
];

fn is_cap_word(w: &str) -> bool {
    w.chars()
        .next()
        .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
        && w.chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '/')
}

/// Name of a thing ending in one of `THINGS` at `noun` (a word range of `t`):
/// the capitalised words before it ("Booby Trap Hazard Table"), or one plain
/// word for a lower-case die ("direction dice").
fn thing_name(t: &str, ws: &[Range<usize>], noun: usize) -> Option<Range<usize>> {
    let n = &t[ws[noun].clone()];
    let cap = THINGS.contains(&n);
    let lower_die = matches!(n, "die" | "dice");
    if !cap && !lower_die {
        return None;
    }
    let mut k = noun;
    if cap {
        while k > 0
            && noun - k < 4
            && is_cap_word(&t[ws[k - 1].clone()])
            && &t[ws[k - 1].end..ws[k].start] == " "
        {
            k -= 1;
        }
        // "1D6 Vehicle Damage Table": the die is not part of the name.
        while k < noun && t[ws[k].clone()].chars().any(|c| c.is_ascii_digit()) {
            k += 1;
        }
        // A sentence that starts with the thing ("Dice are not used") names nothing.
        if k == noun {
            return None;
        }
    } else {
        if noun == 0 {
            return None;
        }
        let w = &t[ws[noun - 1].clone()];
        let before = if noun >= 2 {
            &t[ws[noun - 2].clone()]
        } else {
            ""
        };
        if !w.chars().all(char::is_alphabetic)
            || DIE_WORDS.contains(&w.to_lowercase().as_str())
            || !matches!(before, "a" | "an" | "the")
            || w.ends_with("ed")
        {
            return None;
        }
        k = noun - 1;
    }
    Some(ws[k].start..ws[noun].end)
}

fn word_ranges(t: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in t.char_indices() {
        let part = c.is_alphanumeric() || (start.is_some() && (c == '-' || c == '/'));
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
    for w in &mut out {
        while t[..w.end].ends_with(['-', '/']) && w.end > w.start + 1 {
            w.end -= 1;
        }
    }
    out
}

/// Whether `name` is defined: a heading, a table's first row or caption, or a
/// line of its own starts with it, or a list item is headed by it.
fn defined(lines: &[Line<'_>], body: &Outline<'_>, name: &str) -> bool {
    let name = name.to_lowercase();
    let head = |e: &crate::headings::Entry<'_>| match e.role {
        Role::Heading => e.title.to_lowercase(),
        Role::Item => e.title[..e.title.find([':', '.']).unwrap_or(e.title.len())].to_lowercase(),
    };
    if body.entries.iter().any(|e| head(e).contains(&name)) {
        return true;
    }
    lines.iter().any(|l| {
        let t = l.text().to_lowercase();
        let t = lines::bullet_body(&t)
            .unwrap_or(&t)
            .trim_start_matches(['|', ' ', '"', '“']);
        t.starts_with(&name)
            && t[name.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() || c == ' ')
            && (t.len() <= name.len() + 3
                || t[name.len()..]
                    .trim_start()
                    .starts_with([':', '|', '(', '-', '–']))
    })
}

fn undefined(span: Range<usize>, l: &Line<'_>, name: &str, kind: &str) -> Finding {
    Finding::warning(
        codes::UNDEFINED_NAME,
        l.sub_span(span),
        format!("the {kind} \"{name}\" is used but the text never defines it"),
        format!("undefined {kind}"),
    )
    .with_help(format!(
        "Add the {kind} (a heading, a table or a components entry for \"{name}\"), or use the name the text defines."
    ))
}

/// Things the rules use and no heading, table, list or components entry
/// defines. `quiet` lines already have a finding that says the same.
pub fn undefined_names(
    lines: &[Line<'_>],
    body: &Outline<'_>,
    skip: &dyn Fn(usize) -> bool,
    quiet: &dyn Fn(usize) -> bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut report = |out: &mut Vec<Finding>, key: String, f: Finding| {
        if !seen.contains(&key) {
            seen.push(key);
            out.push(f);
        }
    };
    let phase_lists: Vec<String> = lines
        .iter()
        .map(|l| l.text().to_lowercase())
        .filter(|t| t.contains("phases"))
        .collect();
    for (i, l) in lines.iter().enumerate() {
        if skip(i) || quiet(i) {
            continue;
        }
        if body
            .entry_at_line(i)
            .is_some_and(|e| body.entries[e].role == Role::Heading)
        {
            continue;
        }
        let t = l.text();
        let ws = word_ranges(t);
        for k in 0..ws.len() {
            if let Some(r) = thing_name(t, &ws, k) {
                let name = &t[r.clone()];
                if !defined(lines, body, name) {
                    let kind = t[ws[k].clone()].to_lowercase();
                    let kind = if kind == "dice" {
                        "die".to_string()
                    } else {
                        kind
                    };
                    report(
                        &mut out,
                        name.to_lowercase(),
                        undefined(r.clone(), l, name, &kind),
                    );
                }
            }
            let w = &t[ws[k].clone()];
            // "the Motivation phase", "the preceding enemy fire phase".
            let numbered = ws
                .get(k + 1)
                .is_some_and(|n| t[n.clone()].starts_with(|c: char| c.is_ascii_digit()));
            if w.eq_ignore_ascii_case("phase") && k > 0 && !numbered {
                let prev = &t[ws[k - 1].clone()];
                let lc = prev.to_lowercase();
                let generic = [
                    "this",
                    "that",
                    "each",
                    "every",
                    "a",
                    "the",
                    "one",
                    "next",
                    "same",
                    "current",
                    "preceding",
                    "previous",
                    "following",
                    "own",
                    "first",
                    "second",
                    "third",
                    "last",
                    "any",
                    "which",
                ];
                if prev.chars().all(char::is_alphabetic) && !generic.contains(&lc.as_str()) {
                    let name = format!("{lc} phase");
                    let listed = phase_lists.iter().any(|p| p.contains(&lc));
                    if !listed
                        && !defined(lines, body, &name)
                        && !defined(lines, body, &format!("{lc} phase"))
                    {
                        let headed = body.entries.iter().any(|e| {
                            let tl = e.title.to_lowercase();
                            tl.contains("phase") && tl.contains(&lc)
                        });
                        if !headed {
                            let r = ws[k - 1].start..ws[k].end;
                            report(
                                &mut out,
                                name.clone(),
                                undefined(r, l, &t[ws[k - 1].start..ws[k].end], "phase"),
                            );
                        }
                    }
                }
            }
            // "the MM column": a column no table heads.
            if w == "column" && k >= 1 && &t[ws[k - 1].end..ws[k].start] == " " {
                let col = &t[ws[k - 1].clone()];
                let in_header = lines.iter().any(|l2| {
                    let t2 = l2.text();
                    lines::is_table_row(t2)
                        && t2.split('|').any(|c| c.trim().eq_ignore_ascii_case(col))
                });
                if col.chars().next().is_some_and(char::is_uppercase)
                    && !in_header
                    && !defined(lines, body, col)
                {
                    let r = ws[k - 1].start..ws[k].end;
                    report(
                        &mut out,
                        format!("{col} column"),
                        undefined(r, l, &t[ws[k - 1].start..ws[k].end], "table column"),
                    );
                }
            }
        }
        // An action named in quotes ("a \"Hold / Conceal\" action") that no list of actions has.
        for (q, _) in t.match_indices('"') {
            let Some(len) = t[q + 1..].find('"') else {
                break;
            };
            let name = &t[q + 1..q + 1 + len];
            let after = &t[q + 2 + len..];
            if after.starts_with(" action")
                && name.starts_with(char::is_uppercase)
                && name.len() <= 30
                && !defined(lines, body, name)
            {
                let r = q + 1..q + 1 + len;
                report(
                    &mut out,
                    name.to_lowercase(),
                    undefined(r, l, name, "action"),
                );
            }
        }
    }
    out
}

/// Optimal-string-alignment distance, capped: the count of single-letter
/// edits and swaps, or `cap + 1` when larger.
fn distance(a: &[char], b: &[char], cap: usize) -> usize {
    if a.len().abs_diff(b.len()) > cap {
        return cap + 1;
    }
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// One word is an inflection of the other ("move"/"moves", "fire"/"fired").
fn inflection(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let stem = short.strip_suffix('e').unwrap_or(short);
    let stem_y = short.strip_suffix('y').unwrap_or(short);
    [
        "s", "es", "d", "ed", "r", "er", "ing", "ly", "n", "ies", "ied",
    ]
    .iter()
    .any(|suf| {
        long == format!("{short}{suf}")
            || long == format!("{stem}{suf}")
            || long == format!("{stem_y}{suf}")
    })
}

fn variant(
    span: Range<usize>,
    l: &Line<'_>,
    found: &str,
    usual: &str,
    first_line: usize,
    severity_warning: bool,
) -> Finding {
    let message =
        format!("\"{found}\" is spelled \"{usual}\" elsewhere (first at line {first_line})");
    let f = if severity_warning {
        Finding::warning(
            codes::NAME_VARIANT,
            l.sub_span(span),
            message,
            "spelled two ways",
        )
    } else {
        Finding::advice(
            codes::NAME_VARIANT,
            l.sub_span(span),
            message,
            "spelled two ways",
        )
    };
    f.with_help(format!("Use one spelling throughout (\"{usual}\"), so a reader and a search find every rule about it."))
}

/// Names spelled two ways: a stat abbreviation the stat line spells differently
/// ("DMG" where the stats say "Damage (DAM)"), a word with a letter more, less or
/// swapped ("Bazzoka"/"Bazooka", "meters"/"metres"), a code written joined and
/// spaced ("AutoGL"/"Auto GL").
pub fn variants(lines: &[Line<'_>], skip: &dyn Fn(usize) -> bool) -> Vec<Finding> {
    let mut out = Vec::new();
    // Every word with where it occurs.
    let mut occ: Vec<(usize, Range<usize>, String)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if skip(i) {
            continue;
        }
        let t = l.text();
        let mut start = None;
        for (p, c) in t.char_indices().chain(std::iter::once((t.len(), ' '))) {
            match (c.is_alphabetic(), start) {
                (true, None) => start = Some(p),
                (false, Some(s)) => {
                    occ.push((i, s..p, t[s..p].to_string()));
                    start = None;
                }
                _ => {}
            }
        }
    }
    // Stat abbreviations defined as "Damage (DAM)".
    let mut stats: Vec<(String, String)> = Vec::new();
    for l in lines {
        let t = l.text();
        for (p, _) in t.match_indices(" (") {
            let Some(close) = t[p + 2..].find(')') else {
                continue;
            };
            let abbr = &t[p + 2..p + 2 + close];
            let word = t[..p]
                .rsplit(|c: char| !c.is_alphabetic())
                .next()
                .unwrap_or("");
            let (wu, au) = (word.to_uppercase(), abbr.to_string());
            if (2..=5).contains(&abbr.len())
                && abbr.chars().all(|c| c.is_ascii_uppercase())
                && wu.starts_with(&au[..1])
                && subsequence(&au, &wu)
                && !stats.iter().any(|(a, _)| *a == au)
            {
                stats.push((au, word.to_string()));
            }
        }
    }
    if stats.len() >= 3 {
        for (i, r, w) in &occ {
            if w.len() < 2
                || !w.chars().all(|c| c.is_ascii_uppercase())
                || stats.iter().any(|(a, _)| a == w)
            {
                continue;
            }
            if let Some((a, word)) = stats.iter().find(|(a, word)| {
                a.len() == w.len() && a[..1] == w[..1] && subsequence(w, &word.to_uppercase())
            }) {
                let l = &lines[*i];
                out.push(
                    Finding::warning(
                        codes::NAME_VARIANT,
                        l.sub_span(r.clone()),
                        format!("stat \"{w}\" is not on the stat line: {word} is abbreviated \"{a}\" there"),
                        format!("{a} on the stat line"),
                    )
                    .with_help(format!("Write \"{a}\", as the stat line does.")),
                );
            }
        }
    }
    // Words with one letter more, less or swapped.
    let mut count: HashMap<String, (usize, usize)> = HashMap::new();
    for (k, (_, _, w)) in occ.iter().enumerate() {
        let e = count.entry(w.to_lowercase()).or_insert((0, k));
        e.0 += 1;
    }
    let stem = |w: &str| w.strip_suffix('s').unwrap_or(w).to_string();
    let mut forms: Vec<(String, String, Vec<char>, usize, usize)> = count
        .iter()
        .filter(|(w, _)| w.chars().count() >= 6)
        .map(|(w, &(n, first))| (w.clone(), stem(w), stem(w).chars().collect(), n, first))
        .collect();
    forms.sort_by(|x, y| (x.2.first(), x.4).cmp(&(y.2.first(), y.4)));
    let mut reported: Vec<usize> = Vec::new();
    for x in 0..forms.len() {
        let (a, sa, ca, na, fa) = &forms[x];
        for (y, (b, sb, cb, nb, fb)) in forms.iter().enumerate() {
            if x == y || ca.first() != cb.first() || ca.len().abs_diff(cb.len()) > 1 {
                continue;
            }
            if sa == sb || inflection(a, b) || inflection(sa, sb) {
                continue;
            }
            // `a` is the rarer form (the later one on a tie).
            if na > nb || (na == nb && fa < fb) || reported.contains(&x) {
                continue;
            }
            if distance(ca, cb, 1) != 1 || !slip(ca, cb, a, b, &occ) {
                continue;
            }
            reported.push(x);
            let (li, r, shown) = &occ[*fa];
            out.push(variant(
                r.clone(),
                &lines[*li],
                shown,
                &occ[*fb].2,
                occ[*fb].0 + 1,
                false,
            ));
        }
    }
    // Codes joined in one place and spaced in another: "AutoGL" / "Auto GL".
    let split = |t: &str| -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let mut start = None;
        for (i, c) in t.char_indices().chain(std::iter::once((t.len(), ' '))) {
            let sep = c.is_whitespace() || "/,()".contains(c);
            match (sep, start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    v.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        v
    };
    let code_like = |w: &str| {
        w.len() >= 4
            && w.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
            && w.chars().all(|c| c.is_ascii_alphanumeric())
    };
    let mut joined_at: HashMap<String, usize> = HashMap::new();
    let mut spaced_at: HashMap<String, (usize, String)> = HashMap::new();
    let mut items: Vec<(usize, Range<usize>, String, bool)> = Vec::new();
    for (li, l) in lines.iter().enumerate() {
        if skip(li) {
            continue;
        }
        let t = l.text();
        let ws = split(t);
        for &(a, b) in &ws {
            let w = &t[a..b];
            if code_like(w) {
                joined_at.entry(w.to_string()).or_insert(li);
                items.push((li, a..b, w.to_string(), true));
            }
        }
        for p in ws.windows(2) {
            let (x, y) = (&t[p[0].0..p[0].1], &t[p[1].0..p[1].1]);
            let j = format!("{x}{y}");
            if code_like(&j) && t[p[0].1..p[1].0] == *" " {
                spaced_at
                    .entry(j.clone())
                    .or_insert((li, format!("{x} {y}")));
                items.push((li, p[0].0..p[1].1, j, false));
            }
        }
    }
    for (li, r, key, joined) in items {
        let l = &lines[li];
        let shown = &l.text()[r.clone()];
        let other = if joined {
            spaced_at
                .get(&key)
                .filter(|(at, _)| *at < li)
                .map(|(at, s)| (*at, s.clone()))
        } else {
            joined_at
                .get(&key)
                .filter(|&&at| at < li)
                .map(|&at| (at, key.clone()))
        };
        if let Some((at, usual)) = other {
            out.push(variant(r, l, shown, &usual, at + 1, false));
        }
    }
    out
}

/// Whether a one-letter difference looks like a slip of the pen rather than two
/// different words: two letters swapped ("meters"/"metres"), a letter doubled or
/// undoubled ("Recoiless"/"Recoilless"), or, in a name written with a capital, a
/// letter replaced next to its double ("Bazzoka"/"Bazooka").
fn slip(a: &[char], b: &[char], wa: &str, wb: &str, occ: &[(usize, Range<usize>, String)]) -> bool {
    if a.len() == b.len() {
        let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        match diff.as_slice() {
            [i, j] => *j == i + 1 && a[*i] == b[*j] && a[*j] == b[*i],
            [i] => {
                let doubled = |w: &[char]| {
                    (*i > 0 && w[*i] == w[i - 1]) || (i + 1 < w.len() && w[*i] == w[i + 1])
                };
                let capital = |w: &str| {
                    occ.iter()
                        .any(|(_, _, o)| o.to_lowercase() == w && o.starts_with(char::is_uppercase))
                };
                (doubled(a) || doubled(b)) && capital(wa) && capital(wb)
            }
            _ => false,
        }
    } else {
        let (short, long) = if a.len() < b.len() { (a, b) } else { (b, a) };
        let i = (0..short.len())
            .find(|&i| short[i] != long[i])
            .unwrap_or(short.len());
        (i > 0 && long[i] == long[i - 1]) || (i + 1 < long.len() && long[i] == long[i + 1])
    }
}

fn subsequence(needle: &str, hay: &str) -> bool {
    let mut h = hay.chars();
    needle.chars().all(|c| h.any(|x| x == c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headings;

    fn undefined_in(text: &str) -> Vec<String> {
        let lines = lines::split(text);
        let body = headings::outline(&lines, &|_| false);
        undefined_names(&lines, &body, &|_| false, &|_| false)
            .iter()
            .map(|f| text[f.span.clone()].to_string())
            .collect()
    }

    #[test]
    fn things_used_but_never_defined() {
        let text = "Components\n\n• Battle Manual: examples of play.\n\nThrow the Deviation Die for each battery. Read the Battle Manual and the Campaign Manual. Use a direction dice in jungle, two different colour dice, and the small D6 die. Roll on the 1D6 Reaction Matrix.\n\nUnits test in the Motivation phase and after the enemy fire phase. Elements with a Y in the MM column march. Units that took a \"Hold\" action hide.\n";
        assert_eq!(
            undefined_in(text),
            vec![
                "Deviation Die",
                "Campaign Manual",
                "direction dice",
                "Reaction Matrix",
                "Motivation phase",
                "fire phase",
                "MM column",
                "Hold"
            ]
        );
    }

    #[test]
    fn defined_things_are_fine() {
        let text = "Spotting Table\n| Target | 4 |\n\nEach turn has phases: Move, Fire.\n\nRoll on the Spotting Table. Fire in the Fire phase. Check the Target column.\n";
        assert!(undefined_in(text).is_empty(), "{:?}", undefined_in(text));
    }

    fn variants_in(text: &str) -> Vec<String> {
        variants(&lines::split(text), &|_| false)
            .iter()
            .map(|f| text[f.span.clone()].to_string())
            .collect()
    }

    #[test]
    fn stat_abbreviation_spelled_differently() {
        let text = "Stats are Speed (SPD), Accuracy (ACC), Damage (DAM).\nA hit takes DMG from the target. MUST roll.\n";
        assert_eq!(variants_in(text), vec!["DMG"]);
    }

    #[test]
    fn words_spelled_two_ways() {
        let text = "The Bazooka fires. A bazooka reloads. Range 10 metres, then 20 metres.\nThe Bazzoka is slow; range 30 meters. Units moved and moves; casualty and casualties.\nLMG/Auto GL fire.\nMortar/AutoGL fire.\nRecoilless rifles and Recoilless guns; a Recoiless one.\nThe marker is marked; making a marking; a breech and a breach; though through.\n";
        assert_eq!(
            variants_in(text),
            vec!["Bazzoka", "meters", "Recoiless", "AutoGL"]
        );
    }
}
