//! Content the text promises and does not give: headings with nothing under
//! them, rolls with no table or target number, pictures and examples the text
//! points at that are not reproduced, editors' notes inside the rules, and whole
//! rule areas (scenarios, victory conditions) the text relies on.

use std::ops::Range;

use crate::finding::{Finding, codes};
use crate::headings::{Outline, Role, clip};
use crate::lines::{self, Line};

const MODALS: &[&str] = &[
    "may", "must", "can", "cannot", "should", "will", "are", "is", "has", "have", "you", "your",
];

/// A picture caption left without its picture: a line standing alone right
/// under a heading, shaped "Title: Someone doing something ..." with no rule
/// verb in it.
pub fn is_caption(lines: &[Line<'_>], body: &Outline<'_>, i: usize) -> bool {
    let t = lines[i].text();
    if !lines::stands_alone(lines, i) || !t.ends_with('.') || t.len() > 300 {
        return false;
    }
    let Some(prev) = lines::prev_non_blank(lines, i) else {
        return false;
    };
    if !body
        .entry_at_line(prev)
        .is_some_and(|e| body.entries[e].role == Role::Heading)
    {
        return false;
    }
    let Some((head, rest)) = t.split_once(": ") else {
        return false;
    };
    let head_words = head.split_whitespace().count();
    if head_words == 0 || head_words > 5 || !head.starts_with(|c: char| c.is_uppercase()) {
        return false;
    }
    if !rest.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit()) {
        return false;
    }
    let words: Vec<String> = rest
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect();
    if words.iter().any(|w| MODALS.contains(&w.as_str())) || rest.matches(". ").count() > 0 {
        return false;
    }
    words
        .iter()
        .skip(1)
        .take(8)
        .any(|w| w.len() > 5 && w.ends_with("ing"))
}

const POINTER_VERBS: &[&str] = &["shown", "identified", "illustrated", "depicted", "pictured"];
const POINTER_NOUNS: &[&str] = &[
    "example",
    "diagram",
    "figure",
    "illustration",
    "chart",
    "picture",
    "photo",
    "map",
];

/// Byte ranges of the first `n` words of `s` (letters and digits only).
fn word_ranges(s: &str, n: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(a)) => {
                out.push(a..i);
                start = None;
                if out.len() == n {
                    return out;
                }
            }
            _ => {}
        }
    }
    if let Some(a) = start {
        out.push(a..s.len());
    }
    out.truncate(n);
    out
}

/// Whether the text has a line of its own for a pointed-at thing ("Example:",
/// "Figure 2", "Terrain Chart").
fn has_own_line(lines: &[Line<'_>], name: &str) -> bool {
    let name = name.to_lowercase();
    lines.iter().any(|l| {
        let t = l.text().to_lowercase();
        let t = t.trim_start_matches(|c: char| !c.is_alphanumeric());
        t.starts_with(&name) && t.len() <= name.len() + 80
    })
}

/// "as shown in the example", "identified on its TERRAIN CHART", and picture
/// captions whose picture is gone.
pub fn not_reproduced(
    lines: &[Line<'_>],
    body: &Outline<'_>,
    skip: &dyn Fn(usize) -> bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if skip(i) {
            continue;
        }
        let t = l.text();
        if is_caption(lines, body, i) {
            let head = t.split_once(": ").map_or(t, |(h, _)| h);
            out.push(
                Finding::warning(
                    codes::NOT_REPRODUCED,
                    l.sub_span(0..head.len() + 1),
                    format!("\"{}\" reads as the caption of a picture that is not in the text", clip(t, 70)),
                    "caption without its picture",
                )
                .with_help("Describe what the picture shows if a rule depends on it, or delete the caption."),
            );
            continue;
        }
        let lc = t.to_ascii_lowercase();
        for verb in POINTER_VERBS {
            for (at, _) in lc.match_indices(verb) {
                let rest = &lc[at + verb.len()..];
                let Some(rest) = rest
                    .strip_prefix(" in ")
                    .or_else(|| rest.strip_prefix(" on "))
                else {
                    continue;
                };
                let rest_at = lc.len() - rest.len();
                let words = word_ranges(rest, 4);
                if !words
                    .first()
                    .is_some_and(|w| matches!(&rest[w.clone()], "the" | "its" | "this" | "their"))
                {
                    continue;
                }
                let is_noun = |w: &str| {
                    POINTER_NOUNS
                        .iter()
                        .any(|n| w == *n || w.strip_suffix('s') == Some(n))
                };
                let Some(k) = words.iter().position(|w| is_noun(&rest[w.clone()])) else {
                    continue;
                };
                if k == 0 || k > 2 {
                    continue;
                }
                let noun = &rest[words[k].clone()];
                let name_start = rest_at + words[1].start;
                let name_end = rest_at + words[k].end;
                let name = &t[name_start..name_end];
                if has_own_line(lines, name) || has_own_line(lines, noun) {
                    continue;
                }
                out.push(
                    Finding::warning(
                        codes::NOT_REPRODUCED,
                        l.sub_span(at..name_end),
                        format!(
                            "the text points at \"{}\" but it is not reproduced",
                            clip(name, 40)
                        ),
                        "not in the text",
                    )
                    .with_help(
                        "Reproduce the example, chart or figure, or give its content in words.",
                    ),
                );
            }
        }
        for tag in [
            "[Editor's note",
            "[Editor’s note",
            "[Translator's note",
            "[Translator’s note",
        ] {
            if let Some(at) = t.find(tag) {
                let end = t[at..].find(']').map_or(t.len(), |p| at + p + 1);
                out.push(
                    Finding::advice(
                        codes::EDITOR_NOTE,
                        l.sub_span(at..end),
                        format!("an editor's note inside a rule: {}", clip(&t[at..end], 90)),
                        "editor's note",
                    )
                    .with_help("The printed rule was unclear or altered here; check the note against the original before encoding it."),
                );
            }
        }
    }
    out
}

/// Whether the text after a heading runs to another heading that is not under it.
fn next_heading_outside(
    lines: &[Line<'_>],
    body: &Outline<'_>,
    e: usize,
    skip_line: &dyn Fn(usize) -> bool,
) -> Option<Option<usize>> {
    let mut j = body.entries[e].line;
    loop {
        match lines::next_non_blank(lines, j) {
            None => return Some(None),
            Some(n) if skip_line(n) => j = n,
            Some(n) => {
                let k = body.entry_at_line(n)?;
                if body.entries[k].role != Role::Heading {
                    return None;
                }
                let under = body.ancestors(k).contains(&e);
                return if under { None } else { Some(Some(k)) };
            }
        }
    }
}

const TABLE_WORDS: &[&str] = &["table", "matrix", "chart", "roster"];

/// Headings with nothing under them before the next heading of the same or a
/// higher level, and headings that name a table with no table under them.
pub fn empty_headings(
    lines: &[Line<'_>],
    body: &Outline<'_>,
    skip: &dyn Fn(usize) -> bool,
    regions: &[Range<usize>],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let caption = |n: usize| is_caption(lines, body, n);
    let mut empty = vec![false; body.entries.len()];
    // Deepest first, so a parent whose only children are empty is judged after them.
    for e in (0..body.entries.len()).rev() {
        let entry = &body.entries[e];
        let t = lines[entry.line].text();
        if entry.role != Role::Heading
            || skip(entry.line)
            || t.ends_with(':')
            || regions.iter().any(|r| r.contains(&entry.line))
        {
            continue;
        }
        let first_child = body.entries.iter().position(|c| c.parent == Some(e));
        match next_heading_outside(lines, body, e, &caption) {
            Some(next) => {
                empty[e] = true;
                let what = match next {
                    Some(k) => format!(
                        "is followed directly by \"{}\" (line {})",
                        body.entries[k].describe(),
                        body.entries[k].line + 1
                    ),
                    None => "ends the text".to_string(),
                };
                out.push(
                    Finding::warning(
                        codes::EMPTY_HEADING,
                        lines[entry.line].text_span(),
                        format!("heading \"{}\" has nothing under it: it {what}", entry.describe()),
                        "empty section",
                    )
                    .with_help("Restore the section's text or table (often lost in conversion), or delete the heading."),
                );
            }
            None => {
                let lc = entry.title.to_lowercase();
                let lc = lc.split(" (").next().unwrap_or("");
                let names_table = lc
                    .split(|c: char| !c.is_alphanumeric())
                    .rfind(|w| !w.is_empty())
                    .is_some_and(|w| TABLE_WORDS.contains(&w));
                let next = lines::next_non_blank(lines, entry.line);
                let next = next.and_then(|n| {
                    if caption(n) {
                        lines::next_non_blank(lines, n)
                    } else {
                        Some(n)
                    }
                });
                let child_heading = next
                    .and_then(|n| body.entry_at_line(n))
                    .filter(|&k| body.entries[k].role == Role::Heading && Some(k) == first_child);
                if names_table
                    && let Some(k) = child_heading
                    && !empty[k]
                {
                    out.push(
                        Finding::warning(
                            codes::EMPTY_HEADING,
                            lines[entry.line].text_span(),
                            format!(
                                "heading \"{}\" names a table but no table follows it: the next line is the heading \"{}\"",
                                entry.describe(),
                                body.entries[k].describe()
                            ),
                            "table missing",
                        )
                        .with_help("Restore the table under its heading."),
                    );
                }
            }
        }
    }
    out
}

/// Sentence around byte `at` of `t`.
fn sentence(t: &str, at: usize) -> Range<usize> {
    let start = t[..at]
        .rfind(". ")
        .or_else(|| t[..at].rfind("! "))
        .map_or(0, |p| p + 2);
    let end = t[at..]
        .find(". ")
        .or_else(|| t[at..].find("! "))
        .map_or(t.len(), |p| at + p + 1);
    start..end
}

fn has_target(s: &str) -> bool {
    let lc = s.to_lowercase();
    let b = lc.as_bytes();
    let plus = b.windows(2).any(|w| w[0].is_ascii_digit() && w[1] == b'+');
    let range = lc.char_indices().any(|(i, c)| {
        (c == '-' || c == '–')
            && lc[..i].ends_with(|d: char| d.is_ascii_digit())
            && lc[i + c.len_utf8()..].starts_with(|d: char| d.is_ascii_digit())
    });
    let on_a = ["on a ", "on an ", "of ", "needs a ", "need a "]
        .iter()
        .any(|p| {
            lc.match_indices(p)
                .any(|(i, _)| lc[i + p.len()..].starts_with(|d: char| d.is_ascii_digit()))
        });
    let words = [
        "as for", "table", "chart", "matrix", "higher", "lower", "exceed", "equal", "beat",
        "against", "compare",
    ];
    plus || range || on_a || words.iter().any(|w| lc.contains(w))
}

/// "roll for X" and "roll ... to determine X" with no table, target number or
/// comparison anywhere in the sentence or right after it.
pub fn rolls_without_target(lines: &[Line<'_>], skip: &dyn Fn(usize) -> bool) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if skip(i) {
            continue;
        }
        let t = l.text();
        let lc = t.to_ascii_lowercase();
        for cue in ["roll for ", "rolls for ", " to determine "] {
            for (at, _) in lc.match_indices(cue) {
                if cue == " to determine "
                    && !lc[..at].contains("roll")
                    && !lc[..at].contains("throw")
                {
                    continue;
                }
                // "roll for Mud" names a check; "rolls for motivation" is the usual test
                // the text goes on to give.
                if cue != " to determine " && !t[at + cue.len()..].starts_with(char::is_uppercase) {
                    continue;
                }
                let s = sentence(t, at);
                if has_target(&t[s.clone()]) {
                    continue;
                }
                // A table or list right after the sentence, unless an earlier sentence of
                // the paragraph already claimed it ("Scores to hit are as follows.").
                let claimed =
                    lc[..s.start].contains("as follows") || lc[..s.start].contains("below");
                let next_gives = s.end >= t.len()
                    && !claimed
                    && lines::next_non_blank(lines, i).is_some_and(|n| {
                        let nt = lines[n].text();
                        let body = lines::bullet_body(nt).unwrap_or(nt);
                        let n = body
                            .bytes()
                            .take_while(|c| c.is_ascii_digit() || *c == b'-')
                            .count();
                        lines::is_table_row(nt)
                            || (n > 0 && body[n..].trim_start().starts_with([':', '=', ')']))
                            || (n > 0 && body[n..].starts_with('–'))
                    });
                if next_gives
                    || (s.end < t.len()
                        && has_target(
                            &t[s.end..(s.end + 120).min(t.len())]
                                .chars()
                                .take(120)
                                .collect::<String>(),
                        ))
                {
                    continue;
                }
                let span = at + usize::from(cue.starts_with(' '))..at + cue.len() - 1;
                out.push(
                    Finding::warning(
                        codes::ROLL_WITHOUT_TARGET,
                        l.sub_span(span),
                        format!("\"{}\" asks for a roll but gives no table, target number or comparison", clip(&t[s], 80)),
                        "roll with no result",
                    )
                    .with_help("Give the number to roll or the table that reads the roll."),
                );
            }
        }
    }
    out
}

fn word_at(lc: &str, w: &str) -> Option<usize> {
    lc.match_indices(w).map(|(i, _)| i).find(|&i| {
        lc[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
            && lc[i + w.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric())
    })
}

/// Whether a heading names a scenario itself ("(7) The Scenarios", "First
/// Scenario: ...", "Scenario 2"), not a rule about scenarios.
fn scenario_heading(title: &str) -> bool {
    let lc = title.to_lowercase();
    let words: Vec<&str> = lc
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.contains(&"scenarios")
        || words.last() == Some(&"scenario")
        || lc.contains("scenario:")
        || words
            .windows(2)
            .any(|w| w[0] == "scenario" && w[1].chars().all(|c| c.is_ascii_digit()))
}

const WIN_PHRASES: &[&str] = &[
    "wins if",
    "win if",
    "wins the game",
    "win the game",
    "wins when",
    "victory condition",
    "how to win",
    "victory point",
    "to win",
    "game is won",
];

/// Books long enough to be a whole game: the rule-area checks do not apply to fragments.
const WHOLE_BOOK_BYTES: usize = 4000;

/// Rule areas a whole game needs and the text relies on: scenarios it refers to,
/// victory conditions, and a scenario that lacks the part its siblings have.
pub fn missing_areas(
    text: &str,
    lines: &[Line<'_>],
    body: &Outline<'_>,
    skip: &dyn Fn(usize) -> bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let whole = text.len() >= WHOLE_BOOK_BYTES;
    let headings: Vec<&str> = body
        .entries
        .iter()
        .filter(|e| e.role == Role::Heading)
        .map(|e| e.title)
        .collect();
    let first_mention = |w: &str| {
        lines.iter().enumerate().find_map(|(i, l)| {
            if skip(i) {
                return None;
            }
            word_at(&l.text().to_ascii_lowercase(), w).map(|p| (l, p))
        })
    };
    if whole && !headings.iter().any(|h| scenario_heading(h)) {
        if let Some((l, p)) = first_mention("scenario").or_else(|| first_mention("scenarios")) {
            out.push(
                Finding::warning(
                    codes::MISSING_AREA,
                    l.sub_span(p..p + "scenario".len()),
                    "the text refers to scenarios but none is included",
                    "no scenarios in the text",
                )
                .with_help("Add the scenarios (forces, set-up, length, victory conditions) or a rule for playing without one."),
            );
        }
        // Scenarios named in the text: "In scenarios like Meeting Engagement in the ...".
        for l in lines {
            let t = l.text();
            for cue in [
                "scenarios like ",
                "scenario like ",
                "scenarios such as ",
                "scenario such as ",
            ] {
                let Some(p) = t.to_ascii_lowercase().find(cue) else {
                    continue;
                };
                let from = p + cue.len();
                let name_end = t[from..]
                    .find([',', '.', ';', '('])
                    .map_or(t.len(), |q| from + q);
                let name = t[from..name_end].trim();
                if name.starts_with(|c: char| c.is_uppercase()) {
                    out.push(
                        Finding::warning(
                            codes::MISSING_AREA,
                            l.sub_span(from..from + name.len()),
                            format!("scenario \"{}\" is named but not included", clip(name, 60)),
                            "scenario not in the text",
                        )
                        .with_help("Add the scenario or drop the reference."),
                    );
                }
            }
        }
    }
    let lc_text = text.to_lowercase();
    if whole && !WIN_PHRASES.iter().any(|p| lc_text.contains(p)) {
        let (l, span) = match first_mention("victory") {
            Some((l, p)) => (l, p..p + "victory".len()),
            None => match lines.iter().find(|l| !l.is_blank()) {
                Some(l) => (l, 0..l.text().len().min(40)),
                None => return out,
            },
        };
        let mut span = span;
        while !l.text().is_char_boundary(span.end) {
            span.end -= 1;
        }
        out.push(
            Finding::warning(
                codes::MISSING_AREA,
                l.sub_span(span),
                "the text never says how a game is won: no victory conditions",
                "no victory conditions",
            )
            .with_help("Add victory conditions (or per-scenario ones), so that a game can end with a result."),
        );
    }
    // Scenarios side by side: one without the "how to win" part the others have.
    let scen: Vec<usize> = (0..body.entries.len())
        .filter(|&e| scenario_heading(body.entries[e].title) && !skip(body.entries[e].line))
        .collect();
    let wins = |e: usize| {
        body.entries.iter().any(|c| {
            c.parent == Some(e) && {
                // The part's own title: "How to win. The North ..." -> "how to win".
                let head =
                    c.title[..c.title.find(['.', ':']).unwrap_or(c.title.len())].to_lowercase();
                head.split(|ch: char| !ch.is_alphanumeric())
                    .any(|w| matches!(w, "win" | "winning" | "victory" | "wins"))
            }
        })
    };
    // The umbrella heading ("The Scenarios") holds the scenarios, not their parts.
    let with_children: Vec<usize> = scen
        .iter()
        .copied()
        .filter(|&e| body.entries.iter().any(|c| c.parent == Some(e)))
        .filter(|&e| !scen.iter().any(|&s| body.entries[s].parent == Some(e)))
        .collect();
    if with_children.iter().filter(|&&e| wins(e)).count() >= 2 {
        for &e in &with_children {
            if !wins(e) {
                let entry = &body.entries[e];
                out.push(
                    Finding::warning(
                        codes::MISSING_AREA,
                        lines[entry.line].text_span(),
                        format!("\"{}\" has no victory conditions, unlike the other scenarios", entry.describe()),
                        "no \"how to win\"",
                    )
                    .with_help("Add how this scenario is won, or say that it uses another scenario's conditions."),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headings;

    fn outline(text: &str) -> (Vec<Line<'_>>, Outline<'_>) {
        let lines = lines::split(text);
        let body = headings::outline(&lines, &|_| false);
        (lines, body)
    }

    #[test]
    fn captions_and_pointers_to_missing_pictures() {
        let text = "1. Moving\n\nRiver Patrol: A gunboat cutting through a canal at dusk.\n\nThe Fade: Guerrillas slip back into tunnels during the last phase.\n\nPlace the pieces as shown in the example. Terrain is as identified on its TERRAIN CHART.\n\n[Editor's note: the order of the clauses is unclear.]\n";
        let (lines, body) = outline(text);
        let f = not_reproduced(&lines, &body, &|_| false);
        let got: Vec<&str> = f.iter().map(|f| &text[f.span.clone()]).collect();
        assert_eq!(
            got,
            vec![
                "River Patrol:",
                "shown in the example",
                "identified on its TERRAIN CHART",
                "[Editor's note: the order of the clauses is unclear.]"
            ]
        );
        let with_example = format!("{text}\nExample: a squad moves two hexes.\n");
        let (lines, body) = outline(&with_example);
        assert!(
            !not_reproduced(&lines, &body, &|_| false)
                .iter()
                .any(|f| f.message.contains("\"the example\""))
        );
    }

    #[test]
    fn headings_with_nothing_under_them() {
        let text = "5. Vehicle Roster\n\nA. Allied Vehicles\n\nB. Enemy Vehicles\n\n6. Damage Table\n\n6.1. Crew Shock\n\nCrews may panic.\n\n7. Dismounting\n\nTroops leave.\n\n8. Cooperation\n";
        let (lines, body) = outline(text);
        let f = empty_headings(&lines, &body, &|_| false, &[]);
        let mut got: Vec<&str> = f.iter().map(|f| &text[f.span.clone()]).collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                "6. Damage Table",
                "8. Cooperation",
                "A. Allied Vehicles",
                "B. Enemy Vehicles"
            ]
        );
    }

    #[test]
    fn rolls_need_a_target() {
        let text = "Troops on mud roll for Mud (3\" move max).\nRoll for Survival: 1-2 dies. Roll for Infantry as for the open. A platoon rolls for motivation.\nScores to hit are as follows. If hit roll a d6 to determine the effect\n| Gun | 4 |\nRoll for cover.\n| Open | 6 |\n";
        let f = rolls_without_target(&lines::split(text), &|_| false);
        let got: Vec<&str> = f.iter().map(|f| &text[f.span.clone()]).collect();
        assert_eq!(got, vec!["roll for", "to determine"]);
    }

    #[test]
    fn missing_scenarios_and_victory_conditions() {
        let filler = "Units move and fire in turn. ".repeat(150);
        let text = format!(
            "Rules\n\n{filler}\n\nThe ratio depends on the scenario. Lost units count for victory purposes. In scenarios like River Crossing, both sides hide.\n"
        );
        let (lines, body) = outline(&text);
        let f = missing_areas(&text, &lines, &body, &|_| false);
        let got: Vec<&str> = f.iter().map(|f| &text[f.span.clone()]).collect();
        assert_eq!(got, vec!["scenario", "River Crossing", "victory"]);
        // A short fragment is not a whole game.
        let (lines, body) = outline("The ratio depends on the scenario.\n");
        assert!(
            missing_areas(
                "The ratio depends on the scenario.\n",
                &lines,
                &body,
                &|_| false
            )
            .is_empty()
        );
    }

    #[test]
    fn scenario_without_how_to_win() {
        let text = "(7) The Scenarios\n\nb) First Scenario: \"Dawn\"\n\n1. Setup. Place.\n2. How to win. Hold the hill.\n\nc) Second Scenario: \"Noon\"\n\n1. Setup. Place.\n2. Special rules. None.\n\nd) Third Scenario: \"Dusk\"\n\n1. Setup. Place.\n2. How to win. Exit.\n";
        let (lines, body) = outline(text);
        let f = missing_areas(text, &lines, &body, &|_| false);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].message.contains("Second Scenario"), "{}", f[0].message);
    }
}
