//! The parser on any text: it never panics, and every span it reports lies inside the text
//! on character boundaries (the renderers slice the source with them).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = sandtable_grammar::parse(src);
    for e in &parsed.errors {
        assert!(e.span.start <= e.span.end && e.span.end <= src.len(), "{e:?}");
        assert!(src.is_char_boundary(e.span.start) && src.is_char_boundary(e.span.end));
        assert!(e.code.as_str().starts_with("sand::parse::"), "{e:?}");
    }
    assert!(parsed.errors.len() <= sandtable_grammar::MAX_PARSE_ERRORS + 1);
    for item in &parsed.file.items {
        assert!(item.span.end <= src.len(), "{:?}", item.span);
    }
});
