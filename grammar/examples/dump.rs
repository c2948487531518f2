fn main() {
    let path = std::env::args().nth(1).expect("path");
    let src = std::fs::read_to_string(path).expect("read");
    let p = sandtable_grammar::parse(&src);
    println!("{} items, {} errors", p.file.items.len(), p.errors.len());
    for e in &p.errors {
        println!("{:?} {}", e.span, e.message);
    }
    if std::env::args().nth(2).is_some() {
        println!("{:#?}", p.file);
    }
}
