//! The source database: every file of a ruleset, loaded once, with line lookup. Folders load
//! every `.sand` file beneath them in a stable (sorted) order; `import` adds more.

use std::path::{Path, PathBuf};

use std::sync::Arc;

// Shared with the runtime (scripts, logs), so they live in the IR crate.
pub use sandtable_ir::read::{MAX_FILE_BYTES, ReadError, read_limited};

pub type FileId = u32;

#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The name diagnostics print: the path as given, or `std/NAME.sand`.
    pub name: String,
    /// Canonical path on disk, if any, for de-duplicating imports.
    pub path: Option<PathBuf>,
    /// Shared, so every rendered diagnostic can hold the source without copying it.
    pub text: Arc<str>,
    line_starts: Arc<[usize]>,
}

impl SourceFile {
    pub fn new(name: String, path: Option<PathBuf>, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name,
            path,
            text: text.into(),
            line_starts: line_starts.into(),
        }
    }

    /// A miette source for this file that finds spans through the line index, instead of
    /// scanning the file from its start for every diagnostic.
    pub fn indexed_source(&self) -> IndexedSource {
        IndexedSource {
            name: self.name.clone(),
            text: self.text.clone(),
            line_starts: self.line_starts.clone(),
        }
    }

    /// Length in bytes of 1-based line `line` (without its newline); 0 past the end.
    pub fn line_len(&self, line: usize) -> usize {
        let Some(&start) = line.checked_sub(1).and_then(|l| self.line_starts.get(l)) else {
            return 0;
        };
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |next| next - 1);
        end.saturating_sub(start)
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line as u32 + 1, col as u32 + 1)
    }
}

/// See [`SourceFile::indexed_source`].
#[derive(Debug, Clone)]
pub struct IndexedSource {
    name: String,
    text: Arc<str>,
    line_starts: Arc<[usize]>,
}

impl miette::SourceCode for IndexedSource {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let line = |o: usize| match self.line_starts.binary_search(&o.min(self.text.len())) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let first = line(span.offset()).saturating_sub(before);
        let last = line(span.offset() + span.len()) + after + 1;
        let start = self.line_starts[first];
        let end = self
            .line_starts
            .get(last + 1)
            .copied()
            .unwrap_or(self.text.len());
        // miette reads the window as if it were the whole file; shift its answer back.
        let window = &self.text[start..end];
        let local = miette::SourceSpan::new((span.offset() - start).into(), span.len());
        let c = window.read_span(&local, before, after)?;
        let data = c.data();
        let data_start = data.as_ptr() as usize - window.as_ptr() as usize + start;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            &self.text.as_bytes()[data_start..data_start + data.len()],
            miette::SourceSpan::new((c.span().offset() + start).into(), c.span().len()),
            c.line() + first,
            c.column(),
            c.line_count() + first,
        )))
    }
}

#[derive(Debug, Clone, Default)]
pub struct SourceDb {
    files: Vec<SourceFile>,
}

/// Most files one ruleset may load (folders plus imports).
pub const MAX_FILES: usize = 2_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{path} is larger than the limit of {limit} bytes")]
    TooLarge { path: String, limit: u64 },
    #[error("{path} holds no .sand files")]
    Empty { path: String },
    #[error("more than {limit} files under {path}")]
    TooMany { path: String, limit: usize },
    #[error(
        "{link} is a link to {target}, outside the ruleset folder {folder}; copy the file into \
         the folder, or pass --allow-outside-imports if you trust this ruleset"
    )]
    Outside {
        link: String,
        target: String,
        folder: String,
    },
}

impl SourceDb {
    pub fn add(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        (self.files.len() - 1) as FileId
    }
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id as usize]
    }
    pub fn len(&self) -> usize {
        self.files.len()
    }
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
    pub fn ids(&self) -> impl Iterator<Item = FileId> {
        0..self.files.len() as FileId
    }
    pub fn find_path(&self, path: &Path) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.path.as_deref() == Some(path))
            .map(|i| i as FileId)
    }

    /// Read one file from disk, refusing oversized, unreadable or non-regular ones.
    pub fn load_file(&mut self, path: &Path, display: String) -> Result<FileId, LoadError> {
        let canonical = path.canonicalize().map_err(|e| LoadError::Io {
            path: display.clone(),
            reason: e.to_string(),
        })?;
        if let Some(id) = self.find_path(&canonical) {
            return Ok(id);
        }
        if self.files.len() >= MAX_FILES {
            return Err(LoadError::TooMany {
                path: display,
                limit: MAX_FILES,
            });
        }
        let bytes = read_limited(&canonical, MAX_FILE_BYTES).map_err(|e| match e {
            ReadError::TooLarge { limit } => LoadError::TooLarge {
                path: display.clone(),
                limit,
            },
            other => LoadError::Io {
                path: display.clone(),
                reason: other.to_string(),
            },
        })?;
        let text = String::from_utf8(bytes).map_err(|_| LoadError::Io {
            path: display.clone(),
            reason: "not valid UTF-8".into(),
        })?;
        Ok(self.add(SourceFile::new(display, Some(canonical), text)))
    }
}

/// [`read_limited`] as text; bytes that are not UTF-8 are replaced, the rest kept (scans and
/// conversions are not always clean).
pub fn read_text_lossy(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_limited(path, limit)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Whether `path` lies inside `root` once both are resolved (symbolic links and `..`
/// followed). A path that does not exist is not inside anything.
pub fn is_inside(path: &Path, root: &Path) -> bool {
    match (path.canonicalize(), root.canonicalize()) {
        (Ok(p), Ok(r)) => p.starts_with(r),
        _ => false,
    }
}

/// The `.sand` files of a folder, recursively, sorted by path. `.assume` files are not part
/// of a ruleset and are skipped. Linked folders are not entered. Unless `allow_outside`, a
/// file that resolves outside `dir` (a symbolic link pointing out) is refused, as an import
/// would be: a ruleset from elsewhere must not make the tool read, and echo, any file it can
/// reach.
pub fn sand_files_in(dir: &Path, allow_outside: bool) -> Result<Vec<PathBuf>, LoadError> {
    let root = if allow_outside {
        None
    } else {
        Some(dir.canonicalize().map_err(|e| LoadError::Io {
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?)
    };
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| LoadError::Io {
            path: d.display().to_string(),
            reason: e.to_string(),
        })?;
        for entry in entries.flatten() {
            let p = entry.path();
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "sand") {
                // A dangling link resolves to nothing: loading it reports why.
                if let (Some(root), Ok(target)) = (&root, p.canonicalize())
                    && !target.starts_with(root)
                {
                    return Err(LoadError::Outside {
                        link: p.display().to_string(),
                        target: target.display().to_string(),
                        folder: dir.display().to_string(),
                    });
                }
                out.push(p);
            }
            if out.len() > MAX_FILES {
                return Err(LoadError::TooMany {
                    path: dir.display().to_string(),
                    limit: MAX_FILES,
                });
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one_and_in_chars() {
        let f = SourceFile::new("x".into(), None, "ab\nçd\n".into());
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(5), (2, 2));
        assert_eq!(f.line_col(100), (3, 1));
    }

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sandtable-source-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    #[test]
    fn a_file_of_exactly_the_limit_loads_and_one_byte_more_is_refused() {
        let at = temp("at-limit.sand");
        std::fs::write(&at, vec![b' '; MAX_FILE_BYTES as usize]).unwrap();
        let mut db = SourceDb::default();
        assert!(db.load_file(&at, "at".into()).is_ok());
        let past = temp("past-limit.sand");
        std::fs::write(&past, vec![b' '; MAX_FILE_BYTES as usize + 1]).unwrap();
        assert!(matches!(
            db.load_file(&past, "past".into()),
            Err(LoadError::TooLarge {
                limit: MAX_FILE_BYTES,
                ..
            })
        ));
        let _ = std::fs::remove_file(at);
        let _ = std::fs::remove_file(past);
    }

    #[test]
    fn a_folder_of_exactly_the_file_limit_loads_and_one_file_more_is_refused() {
        let dir = temp("many-files");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..MAX_FILES {
            std::fs::write(dir.join(format!("f{i:04}.sand")), "").unwrap();
        }
        let files = sand_files_in(&dir, false).unwrap();
        assert_eq!(files.len(), MAX_FILES);
        let mut db = SourceDb::default();
        for f in &files {
            db.load_file(f, f.display().to_string()).unwrap();
        }
        std::fs::write(dir.join("one-more.sand"), "").unwrap();
        assert!(matches!(
            sand_files_in(&dir, false),
            Err(LoadError::TooMany {
                limit: MAX_FILES,
                ..
            })
        ));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn devices_and_fifos_are_refused_without_reading_them() {
        // `/dev/zero` reports size 0 and never ends; reading it would exhaust memory.
        assert_eq!(
            read_limited(Path::new("/dev/zero"), 16),
            Err(ReadError::NotAFile("a device"))
        );
        let fifo = temp("pipe.sand");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo is needed");
        // Opening a FIFO with no writer blocks: this returns only because it is not opened.
        assert_eq!(
            read_limited(&fifo, 16),
            Err(ReadError::NotAFile("a FIFO (named pipe)"))
        );
        let mut db = SourceDb::default();
        let err = db.load_file(&fifo, "pipe.sand".into()).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let _ = std::fs::remove_file(fifo);
    }

    #[test]
    fn the_reported_size_is_not_trusted() {
        // Files under /proc report size 0 whatever they hold.
        let status = Path::new("/proc/self/status");
        if status.exists() {
            assert_eq!(
                read_limited(status, 8),
                Err(ReadError::TooLarge { limit: 8 })
            );
            assert!(read_limited(status, 1 << 20).is_ok_and(|b| b.len() > 8));
        }
    }

    #[test]
    fn a_linked_file_pointing_out_of_the_folder_is_refused_unless_allowed() {
        use std::os::unix::fs::symlink;
        let base = temp("links");
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("ruleset");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("main.sand"), "").unwrap();
        let secret = base.join("secret.sand");
        std::fs::write(&secret, "").unwrap();
        // A link that stays inside is a file of the ruleset like any other.
        symlink(dir.join("main.sand"), dir.join("alias.sand")).unwrap();
        assert_eq!(sand_files_in(&dir, false).unwrap().len(), 2);

        let link = dir.join("sub").join("leak.sand");
        symlink("../../secret.sand", &link).unwrap();
        let err = sand_files_in(&dir, false).unwrap_err();
        let LoadError::Outside {
            link: shown,
            target,
            ..
        } = &err
        else {
            panic!("not refused as outside: {err}");
        };
        assert_eq!(shown, &link.display().to_string());
        assert_eq!(
            target,
            &secret.canonicalize().unwrap().display().to_string()
        );
        assert!(err.to_string().contains("--allow-outside-imports"), "{err}");

        let allowed = sand_files_in(&dir, true).unwrap();
        assert!(allowed.contains(&link), "{allowed:?}");
        let _ = std::fs::remove_dir_all(base);
    }
}
