//! The source database: every file of a ruleset, loaded once, with line lookup. Folders load
//! every `.sand` file beneath them in a stable (sorted) order; `import` adds more.

use std::path::{Path, PathBuf};

use std::sync::Arc;

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

/// Largest `.sand` file accepted from disk.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Most files one ruleset may load (folders plus imports).
pub const MAX_FILES: usize = 2_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{path} is {size} bytes; the limit is {limit} bytes")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("{path} holds no .sand files")]
    Empty { path: String },
    #[error("more than {limit} files under {path}")]
    TooMany { path: String, limit: usize },
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

    /// Read one file from disk, refusing oversized or unreadable ones.
    pub fn load_file(&mut self, path: &Path, display: String) -> Result<FileId, LoadError> {
        let canonical = path.canonicalize().map_err(|e| LoadError::Io {
            path: display.clone(),
            reason: e.to_string(),
        })?;
        if let Some(id) = self.find_path(&canonical) {
            return Ok(id);
        }
        let meta = std::fs::metadata(&canonical).map_err(|e| LoadError::Io {
            path: display.clone(),
            reason: e.to_string(),
        })?;
        if meta.len() > MAX_FILE_BYTES {
            return Err(LoadError::TooLarge {
                path: display,
                size: meta.len(),
                limit: MAX_FILE_BYTES,
            });
        }
        let bytes = std::fs::read(&canonical).map_err(|e| LoadError::Io {
            path: display.clone(),
            reason: e.to_string(),
        })?;
        let text = String::from_utf8(bytes).map_err(|_| LoadError::Io {
            path: display.clone(),
            reason: "not valid UTF-8".into(),
        })?;
        if self.files.len() >= MAX_FILES {
            return Err(LoadError::TooMany {
                path: display,
                limit: MAX_FILES,
            });
        }
        Ok(self.add(SourceFile::new(display, Some(canonical), text)))
    }
}

/// The `.sand` files of a folder, recursively, sorted by path. `.assume` files are not part
/// of a ruleset and are skipped.
pub fn sand_files_in(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
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
}
