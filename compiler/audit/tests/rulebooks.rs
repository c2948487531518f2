//! Runs the audit over the project's reference rulebooks and checks the
//! issues an editor found by hand. Skips when the books are not present.

use sandtable_audit::{Finding, audit, codes, summary};
use std::path::PathBuf;

fn books_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/rulebooks")
}

fn load(name: &str) -> Option<String> {
    let path = books_dir().join(name);
    match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(_) => {
            eprintln!("note: {} not found; skipping", path.display());
            None
        }
    }
}

fn spans<'a>(text: &'a str, findings: &[Finding], code: &str) -> Vec<&'a str> {
    findings
        .iter()
        .filter(|f| f.code == code)
        .map(|f| &text[f.span.clone()])
        .collect()
}

fn messages<'a>(findings: &'a [Finding], code: &str) -> Vec<&'a str> {
    findings
        .iter()
        .filter(|f| f.code == code)
        .map(|f| f.message.as_str())
        .collect()
}

#[test]
fn platoon() {
    let Some(text) = load("platoon.txt") else {
        return;
    };
    let f = audit(&text);

    // The missing (6), in the body and in the contents.
    let gaps = messages(&f, codes::NUMBERING_GAP);
    assert!(
        gaps.iter().any(|m| m
            .starts_with("section (6) is missing: numbering jumps from (5) to (7)")
            && !m.contains("contents")),
        "{gaps:#?}"
    );
    assert!(
        gaps.iter()
            .any(|m| m.contains("(6) is missing") && m.contains("table of contents")),
        "{gaps:#?}"
    );

    // The duplicate (7) in the body and in the contents.
    let dups = messages(&f, codes::NUMBERING_DUPLICATE);
    assert!(
        dups.iter()
            .any(|m| m.starts_with("section (7) is used twice:")),
        "{dups:#?}"
    );
    assert!(
        dups.iter()
            .any(|m| m.starts_with("section (7) is used twice in the table of contents")),
        "{dups:#?}"
    );

    // The repeated f) in section (1), printed "f)" then "(f)".
    assert!(
        dups.iter()
            .any(|m| m.starts_with("item (f) is used twice under (1) Game Equipment")),
        "{dups:#?}"
    );
    assert!(spans(&text, &f, codes::NUMBERING_DUPLICATE).contains(&"(f)"));

    // The dangling 6e and 6f; "see rule 7" and "(7)(a)2" hit the doubled (7).
    assert_eq!(
        spans(&text, &f, codes::DANGLING_REFERENCE),
        vec!["6e", "6f"]
    );
    assert_eq!(
        spans(&text, &f, codes::AMBIGUOUS_REFERENCE),
        vec!["7", "(7)(a)2"]
    );

    // "Table of Contents" printed twice.
    assert_eq!(
        spans(&text, &f, codes::REPEATED_HEADING),
        vec!["Table of Contents"]
    );

    // The illegible marks in Scenario 4.
    let illegible = spans(&text, &f, codes::ILLEGIBLE_MARK);
    assert!(
        illegible.contains(&"[one word illegible on the scan]"),
        "{illegible:#?}"
    );
    assert!(
        illegible.iter().any(|s| s.contains("hard to read")),
        "{illegible:#?}"
    );
}

#[test]
fn dinky_dau() {
    let Some(text) = load("dinky_dau.txt") else {
        return;
    };
    let f = audit(&text);

    let dups = messages(&f, codes::NUMBERING_DUPLICATE);
    assert!(
        dups.iter()
            .any(|m| m.starts_with("chapter Chapter 9 is used twice")),
        "{dups:#?}"
    );

    // Chapter 7 exists once: its reference must not be reported.
    let refs: Vec<_> = f
        .iter()
        .filter(|f| f.code == codes::DANGLING_REFERENCE || f.code == codes::AMBIGUOUS_REFERENCE)
        .collect();
    assert!(
        refs.iter().all(|r| !text[r.span.clone()].contains('7')),
        "{refs:#?}"
    );
    // "(See Chapter 13: Vehicles & Armor)": there is no Chapter 13.
    assert_eq!(spans(&text, &f, codes::DANGLING_REFERENCE), vec!["13"]);

    let leadins = spans(&text, &f, codes::EMPTY_LEAD_IN);
    assert!(
        leadins.contains(&"Command Distance Thresholds:"),
        "{leadins:#?}"
    );
}

#[test]
fn police_action() {
    let Some(text) = load("police_action.txt") else {
        return;
    };
    let f = audit(&text);

    let tables = messages(&f, codes::EMPTY_TABLE_CELLS);
    for expected in [
        "table \"Weapon(s)\" (line 31, 7 rows) has 6 empty cells out of 13",
        "table \"Heavy Armour\" (line 39, 9 rows) has 40 empty cells out of 49",
        "table \"Die Roll\" (line 106, 7 rows) has 42 empty cells out of 49",
    ] {
        assert!(
            tables.contains(&expected),
            "missing {expected:?} in {tables:#?}"
        );
    }
    // The motivation table is full and the riverine table too.
    assert!(
        tables
            .iter()
            .all(|m| !m.contains("\"Elite\"") && !m.contains("\"Die Roll\" (line 190")),
        "{tables:#?}"
    );

    let leadins = spans(&text, &f, codes::EMPTY_LEAD_IN);
    // The "Turn Sequence" lead-in (identified by its last words, not quoted whole).
    assert!(
        leadins
            .iter()
            .any(|l| l.ends_with("the following sequence:")),
        "{leadins:#?}"
    );
}

/// Prints every finding of every book (run with `--nocapture` to read them).
#[test]
fn print_all_findings() {
    let Ok(dir) = std::fs::read_dir(books_dir()) else {
        eprintln!("note: {} not found; skipping", books_dir().display());
        return;
    };
    let mut names: Vec<_> = dir
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    names.sort();
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let f = audit(&text);
        println!(
            "== {} ({} findings) {:?}",
            path.display(),
            f.len(),
            summary(&f)
        );
        for x in &f {
            let line = text[..x.span.start].matches('\n').count() + 1;
            println!(
                "  L{line} {} [{:?}] {} | span={:?} | help: {}",
                x.code,
                x.severity,
                x.message,
                crate::clip(&text[x.span.clone()]),
                x.help.as_deref().unwrap_or("")
            );
        }
    }
}

fn clip(s: &str) -> String {
    s.chars().take(70).collect()
}
