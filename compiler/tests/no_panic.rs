//! The parser and compiler never panic: on arbitrary text, and on random mutations of the five
//! encoded rulebooks (the most realistic bad input there is).

use proptest::prelude::*;

fn rule_files() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../rules");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "sand") {
                out.push((
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

const TOKENS: &[&str] = &[
    "section",
    "rule",
    "resolve",
    "bands",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "=>",
    "..=",
    "..",
    "?",
    "d6",
    "3d6",
    "pool(",
    "successes(",
    "let",
    "x",
    "=",
    "+",
    "-",
    "*",
    "/",
    "\"",
    "see",
    "6e",
    "table",
    "columns",
    "stack",
    "when",
    "per",
    "clamp",
    "scenario",
    ":",
    ",",
    "\n",
    "0",
    "-9999999999999999999",
    "99999999999d99999",
    "if",
    "then",
    "else",
    "repeat",
    "for",
    "in",
    "unit",
    "kind",
    "of",
    "1in",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..80).prop_map(|t| t.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,400}") {
        let _ = sandtable_compiler::compile_sources(&[("fuzz.sand", &s)]);
    }

    #[test]
    fn token_soup_never_panics(s in token_soup()) {
        let _ = sandtable_compiler::compile_sources(&[("fuzz.sand", &s)]);
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), 1usize..80).prop_map(|(a, n)| Mutation::Duplicate(a, n)),
        (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(a, t)| Mutation::Insert(a, t)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let len = text.len().max(1);
    let clamp = |i: usize| {
        let mut i = i % len;
        while i > 0 && !text.is_char_boundary(i) {
            i -= 1;
        }
        i.min(text.len())
    };
    match m {
        Mutation::Delete(a, n) => {
            let s = clamp(*a);
            let e = clamp(s + n).max(s);
            format!("{}{}", &text[..s], &text[e..])
        }
        Mutation::Duplicate(a, n) => {
            let s = clamp(*a);
            let e = clamp(s + n).max(s);
            format!("{}{}{}", &text[..e], &text[s..e], &text[e..])
        }
        Mutation::Insert(a, t) => {
            let s = clamp(*a);
            format!("{}{}{}", &text[..s], t, &text[s..])
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn mutated_rulebooks_never_panic(which in any::<usize>(), muts in prop::collection::vec(mutation(), 1..6)) {
        let files = rule_files();
        prop_assume!(!files.is_empty());
        let folder = {
            let (p, _) = &files[which % files.len()];
            std::path::Path::new(p).parent().unwrap().to_path_buf()
        };
        let mut set: Vec<(String, String)> = files.iter().filter(|(p, _)| std::path::Path::new(p).parent() == Some(folder.as_path())).cloned().collect();
        let i = which % set.len();
        let mut text = set[i].1.clone();
        for m in &muts {
            text = apply(&text, m);
        }
        set[i].1 = text;
        let refs: Vec<(&str, &str)> = set.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let c = sandtable_compiler::compile_sources(&refs);
        for d in &c.diagnostics {
            let _ = sandtable_compiler::diagnostic::render::to_plain_string(d, &c.db);
            let _ = d.to_json(&c.db);
        }
    }
}

// Programs the fuzz campaigns found (docs/fuzzing.md), cut down to what crashed.

/// `resolve` target: the checker's interval for `div_up` multiplied the floored quotient back
/// and overflowed near the ends of 64 bits.
#[test]
fn div_up_of_a_huge_dividend_by_a_negative_range_is_checked_without_overflow() {
    let src =
        "die c1 = [-3, 9, 1, 4, 8]\nresolve r() {\n  result div_up(9223372036854775807, c1)\n}\n";
    let compiled = sandtable_compiler::compile_sources(&[("fuzz.sand", src)]);
    assert!(!compiled.has_errors(), "{:?}", compiled.diagnostics);
}
