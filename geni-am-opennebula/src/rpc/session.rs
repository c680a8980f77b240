//! The OpenNebula session string `user:secret`, parameter #0 of every call
//! (the OpenNebula XML-RPC API reference, "Authentication"). oned splits it at the first colon, so the secret
//! may hold colons but the user name may not. A malformed session is caught
//! here, before any call: oned answers every bad session with the same
//! AUTHENTICATION error, and old servers were reported to hang on a blank.
//! The secret is never shown: neither `Debug` nor `Display` print it.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a session string or a `ONE_AUTH` file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// No colon between user and secret.
    #[error("an OpenNebula session is `user:secret`; this one has no colon")]
    NoColon,
    /// Nothing before the colon.
    #[error("the user name of the OpenNebula session is empty")]
    EmptyUser,
    /// A blank or control character in the user name.
    #[error("the user name of the OpenNebula session holds a blank or control character")]
    BadUser,
    /// Nothing after the colon.
    #[error("the secret of the OpenNebula session is empty")]
    EmptySecret,
    /// A line break in the secret.
    #[error("the secret of the OpenNebula session holds a line break")]
    BadSecret,
    /// The `ONE_AUTH` file cannot be read.
    #[error("ONE_AUTH file {path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong (the read error, or why its first line is no session).
        message: String,
    },
}

/// A validated session: the user name and its password or login token.
#[derive(Clone, PartialEq, Eq)]
pub struct Session {
    /// `user:secret`, as sent.
    text: String,
    /// Byte offset of the first colon.
    colon: usize,
}

impl Session {
    /// Validates `text` as `user:secret`: split at the first colon, a user
    /// name that is non-empty and free of blanks and control characters, a
    /// non-empty secret without line breaks.
    pub fn parse(text: &str) -> Result<Session, SessionError> {
        let (user, secret) = text.split_once(':').ok_or(SessionError::NoColon)?;
        if user.is_empty() {
            return Err(SessionError::EmptyUser);
        }
        if user.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(SessionError::BadUser);
        }
        if secret.is_empty() {
            return Err(SessionError::EmptySecret);
        }
        if secret.contains(['\n', '\r']) {
            return Err(SessionError::BadSecret);
        }
        Ok(Session {
            text: text.to_owned(),
            colon: user.len(),
        })
    }

    /// Reads the session from a `ONE_AUTH` file: its first line,
    /// `user:password`, without the trailing line end and blanks.
    pub fn from_one_auth(path: &Path) -> Result<Session, SessionError> {
        let file_error = |message: String| SessionError::File {
            path: path.to_owned(),
            message,
        };
        let content = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
        let first_line = content.lines().next().unwrap_or_default().trim_end();
        Session::parse(first_line).map_err(|e| file_error(format!("first line: {e}")))
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.text[..self.colon]
    }

    /// The string sent as parameter #0; only the encoder needs it.
    pub(super) fn as_param(&self) -> &str {
        &self.text
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("user", &self.user())
            .field("secret", &"<hidden>")
            .finish()
    }
}

impl fmt::Display for Session {
    /// `user:<hidden>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:<hidden>", self.user())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_first_colon() {
        let session = Session::parse("oneadmin:pass:with:colons").unwrap();
        assert_eq!(session.user(), "oneadmin");
        assert_eq!(session.as_param(), "oneadmin:pass:with:colons");
        assert_eq!(
            Session::parse("serveradmin:oneadmin:token").unwrap().user(),
            "serveradmin"
        );
    }

    #[test]
    fn refuses_malformed_sessions() {
        let cases = [
            ("oneadmin", SessionError::NoColon),
            ("", SessionError::NoColon),
            (":secret", SessionError::EmptyUser),
            ("one admin:secret", SessionError::BadUser),
            ("one\tadmin:secret", SessionError::BadUser),
            ("one\u{1}admin:secret", SessionError::BadUser),
            ("oneadmin:", SessionError::EmptySecret),
            ("oneadmin:sec\nret", SessionError::BadSecret),
            ("oneadmin:secret\r", SessionError::BadSecret),
        ];
        for (text, expected) in cases {
            assert_eq!(Session::parse(text), Err(expected), "{text:?}");
        }
        // Blanks inside the secret are the secret's business.
        assert!(Session::parse("oneadmin:a secret").is_ok());
    }

    #[test]
    fn never_shows_the_secret() {
        let session = Session::parse("oneadmin:s3cr3t").unwrap();
        let shown = format!("{session} {session:?} {session:#?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("oneadmin"), "{shown}");
    }

    #[test]
    fn reads_one_auth_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one_auth");
        std::fs::write(&path, "oneadmin:onetest  \r\nignored second line\n").unwrap();
        let session = Session::from_one_auth(&path).unwrap();
        assert_eq!(session.as_param(), "oneadmin:onetest");

        std::fs::write(&path, "\n").unwrap();
        let err = Session::from_one_auth(&path).unwrap_err();
        assert!(err.to_string().contains("one_auth"), "{err}");
        assert!(err.to_string().contains("no colon"), "{err}");

        let missing = dir.path().join("absent");
        let err = Session::from_one_auth(&missing).unwrap_err();
        assert!(
            matches!(&err, SessionError::File { path, .. } if path == &missing),
            "{err}"
        );
    }
}
