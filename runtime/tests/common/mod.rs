//! Helpers shared by the runtime's integration tests.

/// One source compiled as `case.sand`; any error fails the test, showing the source and the
/// errors.
pub fn compile_clean(src: &str) -> sandtable_compiler::Compiled {
    let c = sandtable_compiler::compile_sources(&[("case.sand", src)]);
    let errors: Vec<_> = c
        .diagnostics
        .iter()
        .filter(|d| d.severity == sandtable_compiler::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{src}\n{errors:#?}");
    c
}
