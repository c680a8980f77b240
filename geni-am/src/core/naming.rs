//! Names the aggregate gives: sliver URNs of links and interfaces (stable
//! for their request), the name part of URNs, and the login names of
//! users. The manifest, the node plans and the backend's accounts share
//! them.

use crate::model::UserKeys;
pub use geni_am_backend::naming::{login_name, urn_name};

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

#[cfg(test)]
mod tests {
    use super::*;

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
