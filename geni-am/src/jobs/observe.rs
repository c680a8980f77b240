//! From what the backend reports to what the store says: the operational
//! state a waiting sliver moves to when its VM reaches a power state, and
//! the manifest annotations (host name, logins) built from an observation.

use crate::core::login_names;
use crate::model::{LoginEndpoint, OperationalState, SliverAnnotations, UserKeys};
use crate::store::slivers::Observation;
use geni_am_backend::{VmObservation, VmState};

/// What a sliver in `current` becomes when its VM is seen `seen`: `None`
/// while the VM has not reached the state the sliver waits for.
pub fn next_state(current: OperationalState, seen: VmState) -> Option<OperationalState> {
    use OperationalState as Op;
    match (current, seen) {
        (Op::Failed, _) => None,
        (_, VmState::Failed | VmState::Gone) => Some(Op::Failed),
        (Op::PendingAllocation | Op::Stopping, VmState::Stopped) => Some(Op::NotReady),
        (Op::PendingAllocation | Op::Configuring | Op::ReadyBusy, VmState::Running) => {
            Some(Op::Ready)
        }
        _ => None,
    }
}

/// `annotations` updated with the host name of `seen`, the MAC and
/// address of each interface (the VM's NIC on the interface's network),
/// and one SSH login per login name (users sharing a name share it).
pub fn annotate(
    mut annotations: SliverAnnotations,
    seen: &VmObservation,
    users: &[UserKeys],
) -> SliverAnnotations {
    if !seen.hostname.is_empty() {
        annotations.hostname = Some(seen.hostname.clone());
    }
    if let Some(control) = seen.addresses.iter().find(|nic| nic.network.is_none()) {
        annotations.address = Some(control.ip.clone());
    }
    for interface in &mut annotations.interfaces {
        let nic = seen.addresses.iter().find(|nic| {
            nic.network.is_some()
                && nic.network.as_ref().map(|n| &n.0) == interface.network.as_ref()
        });
        if let Some(nic) = nic {
            interface.mac_address = Some(nic.mac.clone());
            let netmask = nic
                .netmask
                .clone()
                .or_else(|| interface.asked_netmask.clone())
                .unwrap_or_default();
            interface.ips = vec![(nic.ip.clone(), netmask)];
        }
    }
    if let Some(hostname) = &annotations.hostname {
        annotations.logins = login_names(users)
            .into_iter()
            .map(|username| LoginEndpoint {
                hostname: hostname.clone(),
                port: 22,
                username,
            })
            .collect();
    }
    annotations
}

/// What is recorded of a sliver that moves to `next` on `seen`: a
/// failure with the `backend`'s message, else its `annotations` updated
/// from `seen` with the logins of `users`.
pub fn observation(
    next: OperationalState,
    seen: &VmObservation,
    backend: &str,
    annotations: SliverAnnotations,
    users: &[UserKeys],
) -> Observation {
    if next == OperationalState::Failed {
        Observation {
            state: next,
            error: failure_message(seen, backend),
            annotations: None,
        }
    } else {
        Observation {
            state: next,
            error: String::new(),
            annotations: Some(annotate(annotations, seen, users)),
        }
    }
}

/// The message a failed sliver carries for an observation.
fn failure_message(seen: &VmObservation, backend: &str) -> String {
    match seen.state {
        VmState::Gone => format!("the VM disappeared from the {backend}"),
        _ if seen.message.is_empty() => format!("the VM failed in the {backend}"),
        _ => seen.message.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::InterfaceAddresses;
    use OperationalState as Op;
    use geni_am_backend::{NetHandle, NicAddress};

    #[test]
    fn slivers_move_only_when_the_vm_reaches_what_they_wait_for() {
        assert_eq!(next_state(Op::PendingAllocation, VmState::Pending), None);
        assert_eq!(
            next_state(Op::PendingAllocation, VmState::Stopped),
            Some(Op::NotReady)
        );
        assert_eq!(next_state(Op::Configuring, VmState::Stopped), None);
        assert_eq!(next_state(Op::Configuring, VmState::Booting), None);
        assert_eq!(
            next_state(Op::Configuring, VmState::Running),
            Some(Op::Ready)
        );
        assert_eq!(next_state(Op::Stopping, VmState::Running), None);
        assert_eq!(
            next_state(Op::Stopping, VmState::Stopped),
            Some(Op::NotReady)
        );
        assert_eq!(
            next_state(Op::Configuring, VmState::Failed),
            Some(Op::Failed)
        );
        assert_eq!(next_state(Op::Ready, VmState::Gone), Some(Op::Failed));
        assert_eq!(next_state(Op::Failed, VmState::Gone), None);
    }

    #[test]
    fn final_states_are_not_waiting() {
        assert!(Op::Configuring.awaits_backend());
        assert!(!Op::Ready.awaits_backend());
        assert!(!Op::NotReady.awaits_backend());
        assert!(!Op::Failed.awaits_backend());
    }

    #[test]
    fn logins_use_the_hostname_and_the_user_name() {
        let seen = VmObservation {
            state: VmState::Running,
            message: String::new(),
            hostname: "node-1.sim.test".into(),
            addresses: Vec::new(),
        };
        let users = [UserKeys {
            urn: "urn:publicid:IDN+ch.geni.net+user+Alice.Smith".into(),
            keys: vec!["ssh-ed25519 AAAA".into()],
        }];
        let annotations = annotate(SliverAnnotations::default(), &seen, &users);
        assert_eq!(annotations.hostname.as_deref(), Some("node-1.sim.test"));
        assert_eq!(annotations.logins[0].username, "alice_smith");
        assert_eq!(annotations.logins[0].port, 22);
    }

    #[test]
    fn interfaces_get_the_nic_on_their_network() {
        let nic = |network: Option<&str>, ip: &str, netmask: Option<&str>| NicAddress {
            network: network.map(|n| NetHandle(n.into())),
            ip: ip.into(),
            mac: format!("02:00:{ip}"),
            netmask: netmask.map(str::to_owned),
        };
        let seen = VmObservation {
            state: VmState::Running,
            message: String::new(),
            hostname: "n.sim.test".into(),
            addresses: vec![
                nic(None, "10.0.0.2", Some("255.255.0.0")),
                nic(Some("3"), "192.168.3.2", Some("255.255.255.0")),
                nic(Some("4"), "10.10.0.100", None),
            ],
        };
        let interface = |client_id: &str, network: &str| InterfaceAddresses {
            client_id: client_id.into(),
            network: Some(network.into()),
            asked_netmask: Some("255.255.255.128".into()),
            ..InterfaceAddresses::default()
        };
        let annotations = SliverAnnotations {
            interfaces: vec![
                interface("if0", "4"),
                interface("if1", "3"),
                interface("if2", "9"),
            ],
            ..SliverAnnotations::default()
        };
        let out = annotate(annotations, &seen, &[]).interfaces;
        assert_eq!(
            out[0].ips,
            [("10.10.0.100".into(), "255.255.255.128".into())]
        );
        assert_eq!(out[1].ips, [("192.168.3.2".into(), "255.255.255.0".into())]);
        assert_eq!(out[1].mac_address.as_deref(), Some("02:00:192.168.3.2"));
        assert!(out[2].ips.is_empty(), "no NIC on network 9");
        let address = annotate(SliverAnnotations::default(), &seen, &[]).address;
        assert_eq!(address.as_deref(), Some("10.0.0.2"), "the control address");
        assert_eq!(out[2].mac_address, None);
    }

    #[test]
    fn failures_carry_the_backend_message() {
        let mut seen = VmObservation {
            state: VmState::Failed,
            message: "disk corrupt".into(),
            hostname: String::new(),
            addresses: Vec::new(),
        };
        assert_eq!(failure_message(&seen, "simulated cloud"), "disk corrupt");
        seen.state = VmState::Gone;
        assert_eq!(
            failure_message(&seen, "simulated cloud"),
            "the VM disappeared from the simulated cloud"
        );
    }
}
