//! SQLite without its memory count (`store::without_sqlite_memory_statistics`,
//! as `serve` sets it up): a process-wide choice, hence a test binary of
//! its own. Set before SQLite is first used it takes effect (SQLite
//! reports no memory in use, and the store works as before); once SQLite
//! has run, the call changes nothing and says so.

use geni_am::store::{Store, without_sqlite_memory_statistics};

#[test]
fn set_before_sqlite_is_used_sqlite_stops_counting_and_later_calls_change_nothing() {
    assert!(
        without_sqlite_memory_statistics(),
        "SQLite was not set up yet"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("am.sqlite");
    let store = Store::open(&path.to_string_lossy(), 2).expect("store");
    assert!(!store.destructions_pending().expect("a read of the store"));
    // SAFETY: reads a counter.
    let used = unsafe { libsqlite3_sys::sqlite3_memory_used() };
    assert_eq!(used, 0, "SQLite still counts its memory");
    assert!(
        !without_sqlite_memory_statistics(),
        "a call after SQLite started claimed to take effect"
    );
}
