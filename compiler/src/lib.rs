//! `sandtable-compiler`: loads a ruleset (a folder or file of `.sand` sources plus imports),
//! resolves names, checks types and the book's numbering, runs the translators' lints, and
//! lowers everything to one typed IR ([`ir::Program`]).
//!
//! Invariants: compilation never panics on any input; every problem is a [`Diagnostic`] with a
//! stable code, a span and help; one bad item never hides the problems of the others.

pub mod assume;
pub mod diagnostic;
#[cfg(test)]
mod generated_docs;
pub use sandtable_ir as ir;
mod lints;
pub(crate) mod lower;
pub mod numbering;
pub mod reach;
pub mod source;

use std::path::{Path, PathBuf};

use sandtable_grammar::ast;

pub use diagnostic::{Code, Diagnostic, DiagnosticCode, Severity};
pub use source::{FileId, LoadError, ReadError, SourceDb, SourceFile};

/// The standard library, embedded so a ruleset needs no files beside it.
pub const STDLIB: &[(&str, &str)] = &[
    ("dice", include_str!("../../stdlib/dice.sand")),
    ("bands", include_str!("../../stdlib/bands.sand")),
];

/// A compiled ruleset: its sources, the IR, and every diagnostic.
#[derive(Debug)]
pub struct Compiled {
    pub db: SourceDb,
    pub program: ir::Program,
    pub diagnostics: Vec<Diagnostic>,
}

impl Compiled {
    pub fn errors(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
    pub fn warnings(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }
    pub fn has_errors(&self) -> bool {
        self.errors() > 0
    }
}

/// How a ruleset may be loaded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Let `import "FILE"` read files outside the ruleset's folder (off by default: a
    /// ruleset from elsewhere must not make the tool read, and echo, any file it can reach).
    pub allow_outside_imports: bool,
}

/// Compile the ruleset at `path`: a folder (every `.sand` file beneath it) or one file.
pub fn compile_path(path: &Path) -> Result<Compiled, LoadError> {
    compile_path_with(path, LoadOptions::default())
}

/// [`compile_path`] with options.
pub fn compile_path_with(path: &Path, options: LoadOptions) -> Result<Compiled, LoadError> {
    let mut db = SourceDb::default();
    let meta = std::fs::metadata(path).map_err(|e| LoadError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let (roots, folder): (Vec<PathBuf>, PathBuf) = if meta.is_dir() {
        let files = source::sand_files_in(path, options.allow_outside_imports)?;
        if files.is_empty() {
            return Err(LoadError::Empty {
                path: path.display().to_string(),
            });
        }
        (files, path.to_path_buf())
    } else {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        (vec![path.to_path_buf()], parent)
    };
    for f in &roots {
        db.load_file(f, f.display().to_string())?;
    }
    let default_name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let confine = (!options.allow_outside_imports).then(|| Confine {
        root: folder.canonicalize().unwrap_or(folder.clone()),
        shown: folder.display().to_string(),
    });
    Ok(finish(db, default_name, confine))
}

/// The folder imports must stay in.
struct Confine {
    root: PathBuf,
    /// As the user wrote it, for messages.
    shown: String,
}

/// Compile sources held in memory (tests, tools). Imports of files are resolved against the
/// current directory.
pub fn compile_sources(files: &[(&str, &str)]) -> Compiled {
    let mut db = SourceDb::default();
    for (name, text) in files {
        db.add(SourceFile::new(
            (*name).to_string(),
            None,
            (*text).to_string(),
        ));
    }
    let name = files
        .first()
        .map(|(n, _)| n.to_string())
        .unwrap_or_default();
    let confine = std::env::current_dir().ok().map(|root| Confine {
        shown: ".".into(),
        root,
    });
    finish(db, name, confine)
}

fn finish(mut db: SourceDb, default_name: String, confine: Option<Confine>) -> Compiled {
    let mut diags = Vec::new();
    let mut parsed: Vec<(FileId, ast::File)> = Vec::new();
    let mut next: FileId = 0;
    // Files are appended as imports are found; walk until no new ones appear.
    while (next as usize) < db.len() {
        let id = next;
        next += 1;
        let p = sandtable_grammar::parse(&db.file(id).text);
        for e in &p.errors {
            let mut d = Diagnostic::new(e.code, id, e.span, e.message.clone()).label("here");
            if let Some(h) = &e.help {
                d = d.help(h.clone());
            }
            diags.push(d);
        }
        let mut imports = Vec::new();
        collect_imports(&p.file.items, &mut imports);
        for imp in imports {
            match imp {
                ast::Import::Std(name) => {
                    let display = format!("std/{}.sand", name.name);
                    if (0..db.len() as FileId).any(|f| db.file(f).name == display) {
                        continue;
                    }
                    match STDLIB.iter().find(|(n, _)| *n == name.name) {
                        Some((_, text)) => {
                            db.add(SourceFile::new(display, None, (*text).to_string()));
                        }
                        None => {
                            let names: Vec<&str> = STDLIB.iter().map(|(n, _)| *n).collect();
                            diags.push(
                                Diagnostic::new(
                                    Code::ResolveImportNotFound,
                                    id,
                                    name.span,
                                    format!("no standard module `std::{}`", name.name),
                                )
                                .label("unknown module")
                                .help(format!(
                                    "standard modules: {}",
                                    names
                                        .iter()
                                        .map(|n| format!("std::{n}"))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                )),
                            );
                        }
                    }
                }
                ast::Import::File(s) => {
                    let base = db
                        .file(id)
                        .path
                        .as_ref()
                        .and_then(|p| p.parent().map(Path::to_path_buf))
                        .unwrap_or_else(|| PathBuf::from("."));
                    let target = base.join(&s.value);
                    // Named as the user would write it: relative to the importing file's name
                    // as given, never an absolute path that differs from machine to machine.
                    let display = Path::new(&db.file(id).name)
                        .parent()
                        .map_or_else(|| PathBuf::from(&s.value), |p| p.join(&s.value))
                        .display()
                        .to_string();
                    if let Some(c) = &confine
                        && !source::is_inside(&target, &c.root)
                        && target.exists()
                    {
                        diags.push(
                            Diagnostic::new(
                                Code::ResolveImportOutside,
                                id,
                                s.span,
                                format!(
                                    "cannot import \"{}\": it is outside the ruleset folder `{}`",
                                    s.value, c.shown
                                ),
                            )
                            .label("outside the ruleset")
                            .help(
                                "copy the file into the ruleset folder, import a standard module \
                                 (`import std::dice`), or pass --allow-outside-imports if you \
                                 trust this ruleset",
                            ),
                        );
                        continue;
                    }
                    if let Err(e) = db.load_file(&target, display) {
                        diags.push(
                            Diagnostic::new(
                                Code::ResolveImportNotFound,
                                id,
                                s.span,
                                format!("cannot import \"{}\": {e}", s.value),
                            )
                            .label("import")
                            .help("paths are relative to the importing file"),
                        );
                    }
                }
            }
        }
        parsed.push((id, p.file));
    }
    let rulesets: Vec<(FileId, sandtable_grammar::ast::Span, Option<String>)> = parsed
        .iter()
        .flat_map(|(f, file)| file.items.iter().map(move |i| (*f, i)))
        .filter_map(|(f, i)| match &i.kind {
            ast::ItemKind::Config(c) if c.keyword.name == "ruleset" => {
                Some((f, c.keyword.span, c.title.as_ref().map(|t| t.value.clone())))
            }
            _ => None,
        })
        .collect();
    for extra in rulesets.iter().skip(1) {
        diags.push(
            Diagnostic::new(
                Code::ConfigDuplicateRuleset,
                extra.0,
                extra.1,
                "a ruleset has one `ruleset` block; this is another",
            )
            .label("second ruleset block")
            .related(rulesets[0].0, rulesets[0].1, "first ruleset block")
            .help("keep one `ruleset \"Name\" { … }` per folder"),
        );
    }
    let partial = diags.iter().any(|d| d.code == Code::ParseSyntax);
    let (mut program, mut more) = lower::lower(&db, &parsed, partial);
    diags.append(&mut more);
    program.name = rulesets
        .first()
        .and_then(|r| r.2.clone())
        .unwrap_or(default_name);
    program.source = program
        .configs
        .iter()
        .find(|c| c.keyword == "ruleset")
        .and_then(|c| c.properties.iter().find(|p| p.key == "source"))
        .and_then(|p| match p.values.first() {
            Some((_, ir::Expr::Const(ir::Value::Text(t)))) => Some(t.to_string()),
            _ => None,
        });
    // The standard library is not the user's to fix: its own unused helpers are not news.
    diags.retain(|d| {
        !(d.code == Code::LintUnused && db.file(d.primary.file).name.starts_with("std/"))
    });
    diagnostic::sort(&mut diags);
    Compiled {
        db,
        program,
        diagnostics: diags,
    }
}

fn collect_imports<'a>(items: &'a [ast::Item], out: &mut Vec<&'a ast::Import>) {
    for i in items {
        match &i.kind {
            ast::ItemKind::Import(imp) => out.push(imp),
            ast::ItemKind::Section(s) => {
                if let Some(b) = &s.body {
                    collect_imports(b, out);
                }
            }
            _ => {}
        }
    }
}
