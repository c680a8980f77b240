//! Lossless XML document tree (placeholder until the tree lands).
