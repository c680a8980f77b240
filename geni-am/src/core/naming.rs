//! Names the aggregate gives: sliver URNs of links and interfaces (stable
//! for their request), the name part of URNs, and the login names of
//! users. The manifest, the node plans and the backend's accounts share
//! them.

use crate::model::UserKeys;

/// The sliver URN of link `client_id` of request `request_id`: stable for
/// the request, `urn:publicid:IDN+<authority>+sliver+<request id>.<client_id>`
/// with the `client_id` reduced to URN-safe characters.
pub fn link_sliver_urn(authority: &str, request_id: &str, client_id: &str) -> String {
    let name = urn_name(client_id);
    format!("urn:publicid:IDN+{authority}+sliver+{request_id}.{name}")
}

/// The sliver URN of interface `client_id` of the node whose sliver is
/// `node_sliver`: the node's URN followed by `:` and the `client_id`
/// reduced to URN-safe characters.
pub fn interface_sliver_urn(node_sliver: &str, client_id: &str) -> String {
    let name = urn_name(client_id);
    format!("{node_sliver}:{name}")
}

/// The account name of a user: the name part of the user URN, lowercased,
/// other characters than `[a-z0-9_-]` replaced by `_` (the same rule the
/// backend uses to create accounts).
pub fn login_name(user_urn: &str) -> String {
    let name = user_urn.rsplit('+').next().unwrap_or(user_urn);
    let login = sanitize(&name.to_ascii_lowercase(), |c| matches!(c, '_' | '-'), '_');
    if login.is_empty() {
        "geni".to_owned()
    } else {
        login
    }
}

/// The distinct logins of `users` in order of first appearance: users
/// whose URNs map to the same login name share that account.
pub fn login_names(users: &[UserKeys]) -> Vec<String> {
    let mut logins: Vec<String> = Vec::new();
    for user in users {
        let login = login_name(&user.urn);
        if !logins.contains(&login) {
            logins.push(login);
        }
    }
    logins
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
    fn users_with_the_same_login_name_share_one_login() {
        let user = |urn: &str| UserKeys {
            urn: urn.into(),
            keys: Vec::new(),
        };
        let users = [
            user("urn:publicid:IDN+ch.geni.net+user+alice"),
            user("urn:publicid:IDN+ch.geni.net+user+bob"),
            user("urn:publicid:IDN+emulab.net+user+Alice"),
        ];
        assert_eq!(login_names(&users), ["alice", "bob"]);
    }

    #[test]
    fn interface_urns_extend_the_node_urn() {
        assert_eq!(
            interface_sliver_urn("urn:publicid:IDN+am.test+sliver+abc", "a:if 0"),
            "urn:publicid:IDN+am.test+sliver+abc:a-if-0"
        );
    }
}
