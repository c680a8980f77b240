//! SFA credentials (`geni_sfa` versions 2 and 3).

pub mod time;
