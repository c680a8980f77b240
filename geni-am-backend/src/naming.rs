//! Naming rules the backend and the aggregate share: the account a user
//! logs in with (the backend creates it, the manifest announces it), and
//! the name part of a URN made from free text (host URNs from host names).

/// The account name of a user: the name part of the user URN, lowercased,
/// other characters than `[a-z0-9_-]` replaced by `_`; `geni` when nothing
/// is left.
pub fn login_name(user_urn: &str) -> String {
    let name = user_urn.rsplit('+').next().unwrap_or(user_urn);
    let login = sanitize(&name.to_ascii_lowercase(), |c| matches!(c, '_' | '-'), '_');
    if login.is_empty() {
        "geni".to_owned()
    } else {
        login
    }
}

/// `text` as the name part of a URN: ASCII letters, digits, `.`, `-` and
/// `_` kept, anything else becomes `-`.
pub fn urn_name(text: &str) -> String {
    sanitize(text, |c| matches!(c, '.' | '-' | '_'), '-')
}

/// `text` with every character other than ASCII letters, digits and those
/// `extra` accepts replaced by `with`.
fn sanitize(text: &str, extra: impl Fn(char) -> bool, with: char) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || extra(c) {
                c
            } else {
                with
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_names_come_from_the_user_urn() {
        assert_eq!(
            login_name("urn:publicid:IDN+ch.geni.net+user+Alice"),
            "alice"
        );
        assert_eq!(login_name("urn:publicid:IDN+x+user+j.doe"), "j_doe");
        assert_eq!(login_name(""), "geni");
    }

    #[test]
    fn urn_names_keep_dots_dashes_and_underscores() {
        assert_eq!(urn_name("node-1.rack_2"), "node-1.rack_2");
        assert_eq!(urn_name("a b/c"), "a-b-c");
    }
}
