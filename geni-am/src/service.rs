//! The composition root: what the configuration's plain data becomes when
//! the aggregate runs — here, the backend the `[backend]` section names.

pub mod backend;
