//! Strings crossing the libxml2 boundary: borrowed from a document, or
//! copied out of libxml2's allocator and released there.

use libxml::bindings as ffi;
use std::ffi::CStr;
use std::os::raw::c_char;

/// Borrows a NUL-terminated UTF-8 string owned by a document ("" for null
/// or invalid UTF-8, which libxml2 never stores).
///
/// # Safety
/// `ptr` must be null or a NUL-terminated string living as long as `'a`.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char) -> &'a str {
    if ptr.is_null() {
        return "";
    }
    // SAFETY: guaranteed by the caller; libxml2 stores UTF-8.
    unsafe { CStr::from_ptr(ptr) }.to_str().unwrap_or("")
}

/// Copies and frees a string allocated by libxml2.
///
/// # Safety
/// `ptr` must be null or a string allocated by libxml2 and owned by the caller.
pub(crate) unsafe fn take_xml_string(ptr: *mut ffi::xmlChar) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let value = unsafe { CStr::from_ptr(ptr.cast()) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: reading libxml2's deallocator, set once at initialisation.
    if let Some(free) = unsafe { ffi::xmlFree } {
        // SAFETY: the string came from libxml2's allocator and is freed once.
        unsafe { free(ptr.cast()) };
    }
    value
}

/// A libxml2 message as owned text, trimmed ("not well-formed" for none).
///
/// # Safety
/// `ptr` must be null or a NUL-terminated string.
pub(crate) unsafe fn message(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return "not well-formed".to_owned();
    }
    // SAFETY: guaranteed by the caller.
    let text = unsafe { CStr::from_ptr(ptr) }.to_string_lossy();
    let text = text.trim();
    if text.is_empty() {
        "not well-formed".to_owned()
    } else {
        text.to_owned()
    }
}
