//! Recall and precision of `sandtable audit` against a reader's catalogue of the five
//! reference rulebooks (`tests/audit_catalogue/*.txt`, format in its README). Prints the
//! figures per book and per code (`--nocapture`), and fails when they fall below the
//! figures reached so far, so that a change that loses detections or adds noise is seen.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sandtable_audit::{Finding, audit};

/// Floors, in per cent of the whole catalogue, measured when the checks were last improved.
const MIN_RECALL: f64 = 92.0;
const MIN_PRECISION: f64 = 98.0;

/// How far from a finding's span the entry's fragment may sit.
const NEAR: usize = 80;

fn books_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/rulebooks")
}

fn catalogue_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/audit_catalogue")
}

#[derive(Debug)]
struct Entry {
    line: usize,
    class: String,
    code: String,
    fragment: String,
    /// A false positive to avoid rather than a defect.
    ok: bool,
}

fn parse(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (ok, rest) = match t.strip_prefix("ok | ") {
            Some(r) => (true, r),
            None => (false, t),
        };
        let parts: Vec<&str> = if ok {
            rest.splitn(3, " | ").collect()
        } else {
            rest.splitn(4, " | ").collect()
        };
        let (line, class, code, fragment) = match (ok, parts.as_slice()) {
            (true, [l, c, f]) => (l, "ok", c, f),
            (false, [l, k, c, f]) => (l, *k, c, f),
            _ => panic!("bad catalogue line: {raw}"),
        };
        out.push(Entry {
            line: line
                .parse()
                .unwrap_or_else(|_| panic!("bad line number: {raw}")),
            class: class.to_string(),
            code: code.to_string(),
            fragment: fragment.to_string(),
            ok,
        });
    }
    out
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].matches('\n').count() + 1
}

fn near(text: &str, f: &Finding, fragment: &str) -> bool {
    let mut a = f.span.start.saturating_sub(NEAR);
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = (f.span.end + NEAR).min(text.len());
    while !text.is_char_boundary(b) {
        b += 1;
    }
    text[a..b].contains(fragment)
}

#[derive(Default)]
struct Tally {
    entries: usize,
    found: usize,
    findings: usize,
    real: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.entries += o.entries;
        self.found += o.found;
        self.findings += o.findings;
        self.real += o.real;
    }
    fn recall(&self) -> f64 {
        pct(self.found, self.entries)
    }
    fn precision(&self) -> f64 {
        pct(self.real, self.findings)
    }
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 {
        100.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

#[test]
fn recall_and_precision_against_the_catalogue() {
    let mut names: Vec<PathBuf> = std::fs::read_dir(catalogue_dir())
        .expect("catalogue folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 5, "one catalogue per rulebook");
    if !books_dir().is_dir() {
        eprintln!("note: {} not found; skipping", books_dir().display());
        return;
    }
    let mut total = Tally::default();
    let mut per_code: BTreeMap<String, Tally> = BTreeMap::new();
    let mut problems = Vec::new();
    for cat in &names {
        let book = books_dir().join(cat.file_name().unwrap());
        let text = std::fs::read_to_string(&book).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let entries = parse(&std::fs::read_to_string(cat).unwrap());
        let findings = audit(&text);
        // Each finding answers at most one entry, each entry at most one finding.
        let mut used = vec![false; findings.len()];
        let mut tally = Tally {
            findings: findings.len(),
            ..Tally::default()
        };
        for e in &entries {
            let on_line = lines.get(e.line - 1).copied().unwrap_or("");
            assert!(
                on_line.contains(&e.fragment),
                "{}: line {} does not contain {:?}",
                cat.display(),
                e.line,
                e.fragment
            );
            let hit = findings.iter().enumerate().position(|(i, f)| {
                !used[i]
                    && f.code == e.code
                    && line_of(&text, f.span.start) == e.line
                    && near(&text, f, &e.fragment)
            });
            if e.ok {
                if let Some(i) = hit {
                    problems.push(format!(
                        "{}: false positive at line {}: {}",
                        cat.display(),
                        e.line,
                        findings[i].message
                    ));
                }
                continue;
            }
            tally.entries += 1;
            let code = per_code.entry(e.code.clone()).or_default();
            code.entries += 1;
            if let Some(i) = hit {
                used[i] = true;
                tally.found += 1;
                code.found += 1;
            } else {
                println!("  miss {}:{} [{}] {}", e.line, e.class, e.code, e.fragment);
            }
        }
        for (i, f) in findings.iter().enumerate() {
            let code = per_code.entry(f.code.to_string()).or_default();
            code.findings += 1;
            if used[i] {
                tally.real += 1;
                code.real += 1;
            } else {
                println!(
                    "  not in catalogue {}: {} {}",
                    line_of(&text, f.span.start),
                    f.code,
                    f.message
                );
            }
        }
        println!(
            "{}: recall {}/{} ({:.1}%), precision {}/{} ({:.1}%)",
            cat.file_stem().unwrap().to_string_lossy(),
            tally.found,
            tally.entries,
            tally.recall(),
            tally.real,
            tally.findings,
            tally.precision()
        );
        total.add(&tally);
    }
    for (code, t) in &per_code {
        println!(
            "  {code}: catalogued {}, found {}, reported {}, of them catalogued {}",
            t.entries, t.found, t.findings, t.real
        );
    }
    println!(
        "all books: recall {}/{} ({:.1}%), precision {}/{} ({:.1}%)",
        total.found,
        total.entries,
        total.recall(),
        total.real,
        total.findings,
        total.precision()
    );
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(
        total.recall() >= MIN_RECALL,
        "recall fell to {:.1}% (floor {MIN_RECALL}%)",
        total.recall()
    );
    assert!(
        total.precision() >= MIN_PRECISION,
        "precision fell to {:.1}% (floor {MIN_PRECISION}%)",
        total.precision()
    );
}
