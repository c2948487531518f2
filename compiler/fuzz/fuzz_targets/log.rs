//! Reading game logs: any text is either a log or a plain refusal, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((_, events)) = sandtable_runtime::engine::log::parse(text) {
        for e in &events {
            let _ = sandtable_runtime::engine::log::narrate(e);
        }
    }
});
