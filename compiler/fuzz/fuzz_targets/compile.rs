//! Parse, check and lower any text: never a panic, and every diagnostic points inside its
//! file.
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
        let text = &compiled.db.file(d.file).text;
        assert!(d.span.end <= text.len(), "{d:?}");
        assert!(text.is_char_boundary(d.span.start) && text.is_char_boundary(d.span.end));
    }
});
