//! Headings and lead-in sentences that end in a colon but are followed
//! directly by another heading: the list or table they announce is missing
//! (often lost when a document was converted to text).

use crate::finding::{Finding, codes};
use crate::headings::{Outline, Role, clip};
use crate::lines::{self, Line};

/// The noun a lead-in announces: the word after "following", else its last
/// word. When the next heading names it ("the following scenarios:" then
/// "First Scenario"), the headings are the announced content.
fn announced(t: &str) -> Option<String> {
    let mut s = t.trim_end_matches(':').trim();
    while s.ends_with(')') {
        match s.rfind('(') {
            Some(i) => s = s[..i].trim_end(),
            None => break,
        }
    }
    let lower = s.to_lowercase();
    let word = match lower.rfind("following ") {
        Some(i) => lower[i + "following ".len()..]
            .split_whitespace()
            .next()
            .unwrap_or(""),
        None => {
            // "the table below:" announces a table, not a "below".
            let words: Vec<&str> = lower.split_whitespace().collect();
            let n = words.len();
            match words.last() {
                Some(&("below" | "above" | "here" | "follows")) if n >= 2 => words[n - 2],
                Some(w) => w,
                None => "",
            }
        }
    };
    let word: String = word.chars().filter(|c| c.is_alphanumeric()).collect();
    let stem = word.strip_suffix('s').unwrap_or(&word).to_string();
    (stem.chars().count() >= 4).then_some(stem)
}

pub fn check(lines: &[Line<'_>], body: &Outline<'_>, skip: &dyn Fn(usize) -> bool) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.text();
        if skip(i) || !t.ends_with(':') || lines::is_table_row(t) {
            continue;
        }
        let next = lines::next_non_blank(lines, i);
        let Some(j) = next else {
            out.push(finding(l, None));
            continue;
        };
        if is_note(lines[j].text()) {
            out.push(finding(l, Some(&lines[j])));
            continue;
        }
        let Some(e) = body.entry_at_line(j) else {
            continue;
        };
        let entry = &body.entries[e];
        if entry.opened {
            // A new nested list or level: the announced content.
            continue;
        }
        let this = body.entry_at_line(i).map(|k| &body.entries[k]);
        let flattened_step =
            this.is_some_and(|x| x.role == Role::Item) && entry.role == Role::Item && j == i + 1;
        if flattened_step {
            continue;
        }
        if entry.role == Role::Item && this.is_none() && entry.marker.is_some() {
            // A lead-in paragraph before the next item of a list it belongs to
            // is only suspicious when the list is of headings.
            let same_list_item = body.entries[..e]
                .iter()
                .rev()
                .find(|p| p.marker.is_some())
                .is_some_and(|p| {
                    p.role == Role::Item
                        && p.parent == entry.parent
                        && p.marker.as_ref().map(|m| m.style)
                            == entry.marker.as_ref().map(|m| m.style)
                });
            if same_list_item
                && matches!(
                    entry.marker.as_ref().map(|m| m.style),
                    Some(crate::numbering::Style::Dot | crate::numbering::Style::Close)
                )
            {
                continue;
            }
        }
        let next_text = lines[j].text().to_lowercase();
        if announced(t).is_some_and(|w| next_text.contains(&w)) {
            continue;
        }
        out.push(finding(l, Some(&lines[j])));
    }
    out
}

/// A note or call-out ("[!NOTE] ...", "(Note: ...)", "NB: ...") is an aside, not
/// the list or table a colon announces.
fn is_note(t: &str) -> bool {
    let lc = t.to_lowercase();
    lc.starts_with("[!")
        || lc.starts_with("(note")
        || lc.starts_with("note:")
        || lc.starts_with("nb:")
        || lc.starts_with("(nb")
}

fn finding(l: &Line<'_>, next: Option<&Line<'_>>) -> Finding {
    let what = match next {
        Some(n) if is_note(n.text()) => format!(
            "is followed directly by a note, \"{}\" (line {})",
            clip(n.text(), 60),
            n.number()
        ),
        Some(n) => format!(
            "is followed directly by the heading \"{}\" (line {})",
            clip(n.text(), 60),
            n.number()
        ),
        None => "is the last line of the text".to_string(),
    };
    Finding::warning(
        codes::EMPTY_LEAD_IN,
        l.text_span(),
        format!("\"{}\" ends with a colon but {what}: the content it introduces is missing", clip(l.text(), 70)),
        "introduces nothing",
    )
    .with_help("Restore the list, table or figure that belongs here (often lost in conversion), or drop the colon.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headings;

    fn run(text: &str) -> Vec<Finding> {
        let lines = lines::split(text);
        let body = headings::outline(&lines, &|_| false);
        check(&lines, &body, &|_| false)
    }

    #[test]
    fn colon_heading_followed_by_heading() {
        let text = "Command Thresholds:\n\nOut of Command:\n\nWhen a unit strays it suffers.\n";
        let f = run(text);
        assert_eq!(f.len(), 1);
        assert_eq!(&text[f[0].span.clone()], "Command Thresholds:");
    }

    #[test]
    fn lead_in_sentence_without_blank_lines() {
        let text = "Turn Sequence\nWhen your card is drawn run through the following sequence:\nSingle Man Units\nThese are bases.\n";
        let f = run(text);
        assert_eq!(f.len(), 1, "{f:#?}");
    }

    #[test]
    fn colon_followed_by_content_is_fine() {
        let text = "Options:\n\n• Move\n• Fire\n\nSteps:\n\n1. Roll a die.\n2. Add.\n\nThe following scenarios are offered:\n\nFirst Scenario\n\nText.\n";
        assert!(run(text).is_empty(), "{:#?}", run(text));
    }

    #[test]
    fn caption_naming_the_announced_table_is_fine() {
        let text =
            "Spotting\nTo spot a target roll on the table below:\nSpotting Table\n| a | 1 |\n";
        assert!(run(text).is_empty(), "{:#?}", run(text));
        let text = "a) Board. Join the halves as follows:\n\nb) Pieces. Punch them out.\n";
        assert_eq!(run(text).len(), 1);
    }

    #[test]
    fn colon_followed_by_a_note() {
        let text = "Each stand rolls dice by armament:\n\n(Note: halve them when hit.)\n\nShoot.\n\nBases follow the usual sizes:\n\n[!NOTE] No trays needed.\n";
        let f = run(text);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(f[0].message.contains("followed directly by a note"));
    }

    #[test]
    fn flattened_steps_are_fine() {
        let text = "Rules\n\n1. Trigger:\n2. When it fires, roll.\n3. Done.\n";
        assert!(run(text).is_empty());
    }
}
