//! Bounded reading of files a user names (rulesets, assumption files, scripts, logs). It lives
//! here, beside the types both sides share, so the compiler and the runtime read user files
//! the same way without the runtime depending on the compiler.

use std::path::Path;

/// Largest `.sand` or assumptions file accepted from disk (also a `script:` policy file).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Why a user-named file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    Io(String),
    NotAFile(&'static str),
    TooLarge { limit: u64 },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotAFile(k) => write!(f, "it is {k}, not a regular file"),
            ReadError::TooLarge { limit } => {
                write!(f, "it is larger than the limit of {limit} bytes")
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// Read a file the user named, holding at most `limit` bytes in memory. Only regular files
/// are read: a device (`/dev/zero`) never ends and a FIFO may never be written, so either
/// would hang or exhaust memory. The size the file system reports is not trusted (files under
/// `/proc` report 0): at most `limit + 1` bytes are read, and the extra byte means "too large".
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let kind = |m: &std::fs::Metadata| -> Option<&'static str> {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_file() {
            None
        } else if t.is_dir() {
            Some("a folder")
        } else if t.is_fifo() {
            Some("a FIFO (named pipe)")
        } else if t.is_char_device() || t.is_block_device() {
            Some("a device")
        } else if t.is_socket() {
            Some("a socket")
        } else {
            Some("not a plain file")
        }
    };
    // Checked before opening: opening a FIFO for reading blocks until a writer appears.
    let meta = std::fs::metadata(path).map_err(|e| ReadError::Io(e.to_string()))?;
    if let Some(k) = kind(&meta) {
        return Err(ReadError::NotAFile(k));
    }
    let file = std::fs::File::open(path).map_err(|e| ReadError::Io(e.to_string()))?;
    // The path may have been swapped between the check and the open; check what was opened.
    let meta = file.metadata().map_err(|e| ReadError::Io(e.to_string()))?;
    if let Some(k) = kind(&meta) {
        return Err(ReadError::NotAFile(k));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::Io(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}
