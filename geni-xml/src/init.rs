//! libxml2's process-wide state, set once: the parser's initialisation and
//! the external entity loader.
//!
//! The loader is process-global in libxml2, so it is installed here, once,
//! for every user of the library: it serves only the in-memory files that a
//! schema compilation on the same thread hands over ([`serving`]) and
//! refuses every other URL. No parse, compilation or validation ever reads
//! the network or the disk through it.

use libxml::bindings as ffi;
use std::cell::Cell;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::Once;

/// In-memory files by path, and the URL prefix they are served under.
#[derive(Debug, Clone, Copy)]
pub struct InMemoryFiles {
    /// The URL prefix under which the files are served; a URL names a
    /// file when it is this prefix followed by the file's path.
    pub base: &'static str,
    /// The files, as (path relative to `base`, content).
    pub files: &'static [(&'static str, &'static str)],
}

impl InMemoryFiles {
    /// The content of the file `url` names, if it names one of these.
    pub fn lookup(&self, url: &str) -> Option<&'static str> {
        let path = url.strip_prefix(self.base)?;
        self.files
            .iter()
            .find(|(name, _)| *name == path)
            .map(|(_, text)| *text)
    }
}

thread_local! {
    /// The files the loader serves on this thread, while a compilation runs.
    static SERVED: Cell<Option<InMemoryFiles>> = const { Cell::new(None) };
}

/// Initialises libxml2 and installs the refusing entity loader, once per
/// process. Every entry point of this crate calls it; calling it early
/// from `main` is harmless.
pub fn init() {
    static INIT: Once = Once::new();
    // SAFETY: xmlInitParser is idempotent and meant to be called once up
    // front; setting the loader is a plain store of a function pointer
    // that stays valid for the whole process.
    INIT.call_once(|| unsafe {
        ffi::xmlInitParser();
        ffi::xmlSetExternalEntityLoader(Some(load_served));
    });
}

/// Runs `f` with the loader serving `files` on this thread (and nothing
/// else), then restores what it served before.
pub(crate) fn serving<T>(files: InMemoryFiles, f: impl FnOnce() -> T) -> T {
    init();
    /// Restores the previous files even if `f` unwinds.
    struct Restore(Option<InMemoryFiles>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SERVED.with(|served| served.set(self.0));
        }
    }
    let _restore = Restore(SERVED.with(|served| served.replace(Some(files))));
    f()
}

/// libxml2 external entity loader: serves the files of [`serving`] on the
/// calling thread and refuses everything else (no network, no disk, no
/// DTDs).
unsafe extern "C" fn load_served(
    url: *const c_char,
    _id: *const c_char,
    ctxt: ffi::xmlParserCtxtPtr,
) -> ffi::xmlParserInputPtr {
    if url.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: libxml2 passes a NUL-terminated URL.
    let name = unsafe { CStr::from_ptr(url) }.to_string_lossy();
    let Some(text) = SERVED.with(Cell::get).and_then(|files| files.lookup(&name)) else {
        return std::ptr::null_mut();
    };
    let Ok(len) = c_int::try_from(text.len()) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the buffer copies the static text; the new input takes
    // ownership of the buffer and of the duplicated file name, both released
    // by libxml2 with the input.
    unsafe {
        let buffer = ffi::xmlParserInputBufferCreateMem(
            text.as_ptr().cast(),
            len,
            ffi::xmlCharEncoding_XML_CHAR_ENCODING_NONE,
        );
        if buffer.is_null() {
            return std::ptr::null_mut();
        }
        let input =
            ffi::xmlNewIOInputStream(ctxt, buffer, ffi::xmlCharEncoding_XML_CHAR_ENCODING_NONE);
        if input.is_null() {
            ffi::xmlFreeParserInputBuffer(buffer);
            return std::ptr::null_mut();
        }
        (*input).filename = ffi::xmlStrdup(url.cast()).cast();
        input
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: InMemoryFiles = InMemoryFiles {
        base: "mem:/",
        files: &[("a/b.xsd", "<schema/>")],
    };

    #[test]
    fn only_files_under_the_base_are_served() {
        assert_eq!(FILES.lookup("mem:/a/b.xsd"), Some("<schema/>"));
        assert_eq!(FILES.lookup("http://example.org/a/b.xsd"), None);
        assert_eq!(FILES.lookup("mem:/../etc/passwd"), None);
        assert_eq!(FILES.lookup("mem:/a/b.xsd?x"), None);
    }

    #[test]
    fn files_are_served_only_while_a_compilation_runs() {
        assert!(SERVED.with(Cell::get).is_none());
        let inside = serving(FILES, || SERVED.with(Cell::get).is_some());
        assert!(inside);
        assert!(SERVED.with(Cell::get).is_none());
    }
}
