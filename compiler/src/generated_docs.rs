//! The sections of `docs/language.md` generated from tables in the code (diagnostic codes,
//! engine functions). Each sits between
//! `<!-- BEGIN generated: NAME … -->` and `<!-- END generated: NAME -->`; the test fails when
//! one is stale and `SANDTABLE_BLESS=1` rewrites it.

use std::path::PathBuf;

use crate::diagnostic::Code;

/// The generated sections: marker name and content.
fn sections() -> Vec<(&'static str, String)> {
    vec![
        ("diagnostic codes", Code::markdown_list()),
        ("engine functions", crate::ir::functions::markdown_table()),
    ]
}

/// `doc` with the body of section `name` replaced by `body`, or why it cannot be.
fn with_section(doc: &str, name: &str, body: &str) -> Result<String, String> {
    let begin = format!("<!-- BEGIN generated: {name}");
    let end = format!("<!-- END generated: {name} -->");
    let b = doc
        .find(&begin)
        .ok_or_else(|| format!("no `{begin} …-->` marker"))?;
    let body_start = b + doc[b..].find("-->\n").ok_or("unclosed BEGIN marker")? + 4;
    let e = doc[body_start..]
        .find(&end)
        .map(|i| body_start + i)
        .ok_or_else(|| format!("no `{end}` marker after the BEGIN marker"))?;
    Ok(format!("{}{body}\n{}", &doc[..body_start], &doc[e..]))
}

#[test]
fn generated_sections_of_the_language_reference_are_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/language.md");
    let doc = std::fs::read_to_string(&path).expect("docs/language.md is readable");
    let mut want = doc.clone();
    for (name, body) in sections() {
        want = with_section(&want, name, &body).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    if want == doc {
        return;
    }
    if std::env::var_os("SANDTABLE_BLESS").is_some() {
        std::fs::write(&path, want).expect("docs/language.md is writable");
        return;
    }
    panic!(
        "docs/language.md is stale: a generated section differs from its table; regenerate it with \
         `SANDTABLE_BLESS=1 cargo test -p sandtable-compiler --lib generated_docs`"
    );
}

#[test]
fn a_section_is_replaced_between_its_markers_only() {
    let doc = "a\n<!-- BEGIN generated: x (from y) -->\nold\n<!-- END generated: x -->\nb\n";
    assert_eq!(
        with_section(doc, "x", "new").unwrap(),
        "a\n<!-- BEGIN generated: x (from y) -->\nnew\n<!-- END generated: x -->\nb\n"
    );
    assert!(with_section(doc, "z", "new").is_err());
}
