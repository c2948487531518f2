//! Parse every file given and report the time: `cargo run --release -p sandtable-grammar --example parse_time -- FILE...`
fn main() {
    let mut total = std::time::Duration::ZERO;
    let mut bytes = 0;
    for path in std::env::args().skip(1) {
        let src = std::fs::read_to_string(&path).expect("read");
        bytes += src.len();
        let t = std::time::Instant::now();
        let p = sandtable_grammar::parse(&src);
        total += t.elapsed();
        assert!(p.errors.is_empty(), "{path}: {:?}", p.errors);
    }
    println!(
        "{bytes} bytes parsed in {:.2} ms",
        total.as_secs_f64() * 1e3
    );
}
