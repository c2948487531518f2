//! Parse, check and lower any text: never a panic, every diagnostic points inside its file,
//! and every diagnostic renders.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    // File imports read the machine's files relative to the working directory: not this
    // target's business (file loading has its own tests).
    if src.contains("import") {
        return;
    }
    let compiled = sandtable_compiler::compile_sources(&[("fuzz.sand", src)]);
    for d in &compiled.diagnostics {
        for l in std::iter::once(&d.primary).chain(&d.related) {
            let text = &compiled.db.file(l.file).text;
            assert!(l.span.start <= l.span.end && l.span.end <= text.len(), "{d:?}");
            assert!(text.is_char_boundary(l.span.start) && text.is_char_boundary(l.span.end));
        }
        // The text a user reads is rendered from those spans.
        let _ = sandtable_compiler::diagnostic::render::to_plain_string(d, &compiled.db);
    }
});
