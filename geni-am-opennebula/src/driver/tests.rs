//! Tests of [`OpenNebulaCloud`] through the [`Compute`] trait, against the
//! replies a real oned 7.4.0 gave (the recorded test data),
//! replayed by [`Replay`], which also records what the driver sent.

use super::*;
use crate::config::SAMPLE_SECTION;
use crate::testing::{Replay, Sent, parse_extra_template, payload, value_at};
use geni_am_backend::{ErrorClass, ExecuteSpec, InstallSpec, NicSpec};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

mod inventory;

const AUTHORITY: &str = "am.example";
const HOST: &str = "urn:publicid:IDN+am.example+node+localhost";
const TAG: &str = "urn:publicid:IDN+am.example+sliver+42";

struct Fixture {
    cloud: OpenNebulaCloud,
    rpc: Arc<Replay>,
    now: Arc<AtomicI64>,
}

fn fixture() -> Fixture {
    fixture_with(|_| {})
}

fn fixture_with(edit: impl FnOnce(&mut OneConfig)) -> Fixture {
    let mut config: OneConfig = toml::from_str(SAMPLE_SECTION).unwrap();
    edit(&mut config);
    config.validate().unwrap();
    let rpc = Arc::new(Replay::new());
    let now = Arc::new(AtomicI64::new(1_000));
    let clock_now = now.clone();
    let clock: Clock = Box::new(move || clock_now.load(Ordering::SeqCst));
    let cloud = OpenNebulaCloud::new(Box::new(rpc.clone()), config, AUTHORITY, clock);
    Fixture { cloud, rpc, now }
}

fn user(name: &str, key: &str) -> UserKeys {
    UserKeys {
        urn: format!("urn:publicid:IDN+ch.geni.net+user+{name}"),
        keys: vec![key.to_owned()],
    }
}

fn spec() -> VmSpec {
    VmSpec {
        size: None,
        tag: TAG.into(),
        name: "node-0".into(),
        host: Some(HOST.into()),
        sliver_type: "small".into(),
        disk_image: None,
        users: vec![
            user("alice", "ssh-ed25519 AAAA alice@laptop"),
            user("bob", "ssh-rsa BBBB bob"),
        ],
        networks: Vec::new(),
        exclusive: false,
        install: Vec::new(),
        execute: Vec::new(),
    }
}

/// The `<name>` VM of a recorded pool with `LABELS` set.
fn labelled_pool(id: i64, labels: &str) -> String {
    payload("vmpool.info-running")
        .replacen("<ID>0</ID>", &format!("<ID>{id}</ID>"), 1)
        .replace(
            "<USER_TEMPLATE/>",
            &format!("<USER_TEMPLATE><LABELS><![CDATA[{labels}]]></LABELS></USER_TEMPLATE>"),
        )
}

/// A recorded VM document moved to (`state`, `lcm_state`).
fn with_state(name: &str, state: i64, lcm_state: i64) -> String {
    let recorded = payload(name);
    let start = recorded.find("<STATE>").unwrap();
    let end = recorded.find("</LCM_STATE>").unwrap();
    format!(
        "{}<STATE>{state}</STATE><LCM_STATE>{lcm_state}{}",
        &recorded[..start],
        &recorded[end..]
    )
}

/// A recorded VM document whose CONTEXT is replaced by `context`.
fn vm_with_context(name: &str, context: &[(String, String)]) -> String {
    let recorded = payload(name);
    let start = recorded.find("<CONTEXT>").unwrap();
    let end = recorded.find("</CONTEXT>").unwrap() + "</CONTEXT>".len();
    let mut template = ExtraTemplate::new();
    template.vector("CONTEXT", context).unwrap();
    let xml = template.to_xml();
    let element = &xml["<TEMPLATE>".len()..xml.len() - "</TEMPLATE>".len()];
    format!("{}{element}{}", &recorded[..start], &recorded[end..])
}

/// The extra template of the one instantiate call among `sent`, checked
/// for its 5 parameters with hold set.
fn instantiated(sent: &[Sent]) -> (String, Vec<(String, String)>) {
    let call = sent
        .iter()
        .find(|s| s.method == "one.template.instantiate")
        .expect("an instantiate call");
    assert_eq!(call.params.len(), 5, "never 4 params: {:?}", call.params);
    assert_eq!(call.params[0], Param::Int(0), "the type's template");
    assert_eq!(call.params[2], Param::Bool(true), "created on hold");
    assert_eq!(call.params[4], Param::Bool(false), "not persistent");
    let (Param::Str(name), Param::Str(extra)) = (&call.params[1], &call.params[3]) else {
        panic!("name and extra template are strings: {:?}", call.params);
    };
    (name.clone(), parse_extra_template(extra))
}

fn paths(pairs: &[(String, String)]) -> Vec<&str> {
    pairs.iter().map(|(p, _)| p.as_str()).collect()
}

/// Scripts what a first creation reads: no VM with the tag yet, the
/// template, the hosts.
fn script_reads(rpc: &Replay) -> &Replay {
    rpc.recorded("one.vmpool.info", "vmpool.info-empty")
        .recorded("one.template.info", "template.info")
        .recorded("one.hostpool.info", "hostpool.info")
}

fn script_creation(rpc: &Replay) {
    script_reads(rpc).id("one.template.instantiate", 7);
}

#[test]
fn create_instantiates_on_hold_with_the_merged_context_and_the_tag() {
    let f = fixture();
    let mut spec = spec();
    spec.disk_image = Some("geni-img".into());
    spec.networks = vec![
        NicSpec {
            network: NetHandle("5".into()),
            ip: Some("192.168.5.10".into()),
        },
        NicSpec {
            network: NetHandle("6".into()),
            ip: None,
        },
    ];
    f.rpc
        .recorded("one.vmpool.info", "vmpool.info-empty")
        .recorded("one.template.info", "template.info")
        .recorded("one.imagepool.info", "imagepool.info")
        .recorded("one.hostpool.info", "hostpool.info")
        .id("one.template.instantiate", 7);
    assert_eq!(f.cloud.create_vm(&spec).unwrap(), VmHandle("7".into()));
    let sent = f.rpc.take_sent();
    assert_eq!(
        sent[0].params,
        [-3, -1, -1, -1].map(Param::Int),
        "own live VMs"
    );
    let (name, extra) = instantiated(&sent);
    assert_eq!(name, "node-0");
    assert_eq!(
        paths(&extra),
        [
            "CPU",
            "VCPU",
            "MEMORY",
            "CONTEXT/NETWORK",
            "CONTEXT/SSH_PUBLIC_KEY",
            "CONTEXT/USERNAME",
            "CONTEXT/SET_HOSTNAME",
            "CONTEXT/START_SCRIPT_BASE64",
            "CONTEXT/GENI_SLIVER_BASE64",
            "DISK/IMAGE_ID",
            "NIC/NETWORK_ID",
            "NIC/NETWORK_ID",
            "NIC/IP",
            "NIC/NETWORK_ID",
            "SCHED_REQUIREMENTS",
            "LABELS",
            "GENI_SLIVER_URN",
        ]
    );
    let values: Vec<&str> = extra.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(values[..4], ["0.5", "1", "256", "YES"]);
    assert_eq!(
        value_at(&extra, "CONTEXT/SSH_PUBLIC_KEY"),
        Some("ssh-ed25519 AAAA alice@laptop"),
        "only the keys of the USERNAME login; bob's go to bob's login"
    );
    assert_eq!(value_at(&extra, "CONTEXT/USERNAME"), Some("alice"));
    assert_eq!(value_at(&extra, "CONTEXT/SET_HOSTNAME"), Some("node-0"));
    assert_eq!(values[9..14], ["0", "0", "5", "192.168.5.10", "6"]);
    assert_eq!(value_at(&extra, "SCHED_REQUIREMENTS"), Some("ID=\"0\""));
    assert_eq!(value_at(&extra, "LABELS"), Some(&*format!("geni-am/{TAG}")));
    assert!(f.rpc.is_done());
}

#[test]
fn every_template_context_entry_is_resent_verbatim() {
    let f = fixture();
    let template = payload("template.info").replace(
        "</CONTEXT>",
        "<REPORT_READY><![CDATA[YES]]></REPORT_READY><NOTE><![CDATA[$NAME on $USER[TEMPLATE]]]></NOTE></CONTEXT>",
    );
    f.rpc
        .recorded("one.vmpool.info", "vmpool.info-empty")
        .document("one.template.info", &template)
        .recorded("one.hostpool.info", "hostpool.info")
        .id("one.template.instantiate", 7);
    f.cloud.create_vm(&spec()).unwrap();
    let (_, extra) = instantiated(&f.rpc.take_sent());
    let context: Vec<(&str, &str)> = extra
        .iter()
        .filter_map(|(p, v)| Some((p.strip_prefix("CONTEXT/")?, v.as_str())))
        .collect();
    assert_eq!(context[0], ("NETWORK", "YES"));
    assert_eq!(context[1].0, "SSH_PUBLIC_KEY");
    assert_eq!(context[2], ("REPORT_READY", "YES"));
    assert_eq!(context[3], ("NOTE", "$NAME on $USER[TEMPLATE]"));
    assert!(
        !paths(&extra).contains(&"NIC/NETWORK_ID"),
        "no links: the template's NICs stay"
    );
}

#[test]
fn hostile_strings_cannot_break_or_extend_the_template() {
    let f = fixture();
    let mut hostile = spec();
    hostile.name = "x\"]]><RAW><DATA>evil</DATA></RAW>$USER[PASSWORD]\n:".into();
    hostile.users = vec![UserKeys {
        urn: "urn:publicid:IDN+ch.geni.net+user+e\"vil]<$x>".into(),
        keys: vec![
            "ssh-ed25519 AAAA $USER[PASSWORD]".into(),
            "ssh-rsa KEY\"]\nRAW=[DATA=\"x\"]".into(),
            "ssh-rsa CDATA ]]> end".into(),
        ],
    }];
    hostile.install = vec![InstallSpec {
        url: "http://x/a.tgz\"]]><CPU>99</CPU>".into(),
        install_path: "/tmp/$(reboot)".into(),
    }];
    hostile.execute = vec![ExecuteSpec {
        shell: "sh".into(),
        command: "echo $HOME ]]> \"'`reboot`".into(),
    }];
    script_creation(&f.rpc);
    f.cloud.create_vm(&hostile).unwrap();
    let (name, extra) = instantiated(&f.rpc.take_sent());
    assert!(!name.contains(['"', '$', '<', '>', ':', '\n']), "{name}");
    f.rpc
        .recorded("one.vmpool.info", "vmpool.info-empty")
        .id("one.template.instantiate", 8);
    f.cloud.create_vm(&spec()).unwrap();
    let (_, benign) = instantiated(&f.rpc.take_sent());
    assert_eq!(
        paths(&extra),
        paths(&benign),
        "the same attributes, nothing injected"
    );
    assert_eq!(value_at(&extra, "CPU"), Some("0.5"));
    assert_eq!(
        value_at(&extra, "CONTEXT/SSH_PUBLIC_KEY"),
        Some("$USER[SSH_PUBLIC_KEY]"),
        "keys with `$`, line breaks or `]]>` only travel in base64; the template's value stays"
    );
    for (path, value) in &extra {
        let untrusted_allowed = [
            "LABELS",
            "GENI_SLIVER_URN",
            "CONTEXT/SSH_PUBLIC_KEY",
            "SCHED_REQUIREMENTS",
        ];
        if !untrusted_allowed.contains(&path.as_str()) {
            assert!(!value.contains(['$', '"', '<', '\'']), "{path}={value:?}");
        }
    }
}

#[test]
fn a_crash_between_create_and_store_never_creates_a_second_vm() {
    let f = fixture();
    script_creation(&f.rpc);
    assert_eq!(f.cloud.create_vm(&spec()).unwrap(), VmHandle("7".into()));
    f.rpc.take_sent();
    let mine = format!("other,{}", names::vm_label("geni-am", TAG));
    f.rpc.document("one.vmpool.info", &labelled_pool(7, &mine));
    assert_eq!(f.cloud.find_vm(TAG).unwrap(), Some(VmHandle("7".into())));
    f.rpc.document("one.vmpool.info", &labelled_pool(7, &mine));
    assert_eq!(f.cloud.create_vm(&spec()).unwrap(), VmHandle("7".into()));
    assert_eq!(f.rpc.take_methods(), ["one.vmpool.info", "one.vmpool.info"]);
    let theirs = names::vm_label("other-am", TAG);
    f.rpc
        .document("one.vmpool.info", &labelled_pool(7, &theirs));
    assert_eq!(f.cloud.list_vms().unwrap(), []);
    f.rpc.document("one.vmpool.info", &labelled_pool(7, &mine));
    assert_eq!(
        f.cloud.list_vms().unwrap(),
        [TaggedVm {
            handle: VmHandle("7".into()),
            tag: TAG.into()
        }]
    );
}

/// A pool of the recorded VM `count` times, ids from `first` down, each
/// labelled with this aggregate's tag `urn:…+sliver+<id>`.
fn tagged_pool(first: i64, count: i64) -> String {
    let vms: String = (0..count)
        .map(|n| {
            let id = first - n;
            let tag = format!("urn:publicid:IDN+am.example+sliver+{id}");
            let pool = labelled_pool(id, &names::vm_label("geni-am", &tag));
            let start = pool.find("<VM>").unwrap();
            let end = pool.rfind("</VM>").unwrap() + "</VM>".len();
            pool[start..end].to_owned()
        })
        .collect();
    format!("<VM_POOL>{vms}</VM_POOL>")
}

#[test]
fn every_vm_is_listed_a_page_at_a_time() {
    let f = fixture();
    let page = LIST_PAGE as i64;
    f.rpc
        .document("one.vmpool.info", &tagged_pool(2 * page + 1, page));
    f.rpc
        .document("one.vmpool.info", &tagged_pool(page + 1, page));
    f.rpc.document("one.vmpool.info", &tagged_pool(1, 1));
    let mut tags = Vec::new();
    f.cloud.visit_vms(&mut |vm| tags.push(vm.tag)).unwrap();
    assert_eq!(tags.len(), 2 * LIST_PAGE + 1);
    assert_eq!(tags[0], "urn:publicid:IDN+am.example+sliver+1001");
    assert_eq!(tags[2 * LIST_PAGE], "urn:publicid:IDN+am.example+sliver+1");
    let offsets: Vec<_> = f.rpc.take_sent().into_iter().map(|s| s.params).collect();
    let paged = |offset| [-3, offset, -(LIST_PAGE as i32), -1].map(Param::Int);
    assert_eq!(
        offsets,
        [paged(0), paged(500), paged(1000)],
        "offset and page size"
    );
    // A last page that is full is followed by an empty one.
    f.rpc.document("one.vmpool.info", &tagged_pool(page, page));
    f.rpc.document("one.vmpool.info", "<VM_POOL></VM_POOL>");
    assert_eq!(f.cloud.list_vms().unwrap().len(), LIST_PAGE);
    assert!(f.rpc.is_done());
}

fn observe_recorded(f: &Fixture, name: &str) -> VmObservation {
    f.rpc.recorded("one.vm.info", name);
    f.cloud.observe(&VmHandle("0".into())).unwrap()
}

#[test]
fn every_recorded_state_maps() {
    let f = fixture();
    // The recorded life cycle (names say when each was taken; STATE and
    // LCM_STATE are in the documents).
    for (name, expected) in [
        ("vm.info-vm1-pending_lcm_init", VmState::Pending),
        ("vm.info-vm1-active_prolog", VmState::Booting),
        ("vm.info-vm1-active_boot", VmState::Booting),
        ("vm.info-running", VmState::Running),
        ("vm.info-vm2-running", VmState::Running),
        ("vm.info-vm1-active_shutdown_poweroff", VmState::Stopping),
        ("vm.info-vm1-active_boot_poweroff", VmState::Booting),
        ("vm.info-vm1-active_shutdown", VmState::Stopping),
        ("vm.info-vm1-active_epilog", VmState::Gone),
        ("vm.info-vm1-done_lcm_init", VmState::Gone),
        ("vm.info-done", VmState::Gone),
        ("vm.info-vm4-active_prolog", VmState::Booting),
        ("vm.info-vm4-active_boot_failure", VmState::Failed),
        ("err.vm-info-no-such-id", VmState::Gone),
    ] {
        assert_eq!(observe_recorded(&f, name).state, expected, "{name}");
    }
    // The states the recording passed between polls, on a recorded body.
    for ((state, lcm_state), expected) in [
        ((0, 0), VmState::Pending),
        ((2, 0), VmState::Stopped),
        ((4, 0), VmState::Stopped),
        ((5, 0), VmState::Stopped),
        ((8, 0), VmState::Stopped),
        ((9, 0), VmState::Stopped),
        ((10, 0), VmState::Pending),
        ((11, 0), VmState::Failed),
        ((3, 0), VmState::Booting),
        ((3, 11), VmState::Stopping),
        ((3, 16), VmState::Failed),
        ((3, 17), VmState::Running),
        ((3, 39), VmState::Failed),
        ((3, 51), VmState::Stopped),
        ((3, 99), VmState::Failed),
        ((99, 0), VmState::Failed),
    ] {
        f.rpc.document(
            "one.vm.info",
            &with_state("vm.info-running", state, lcm_state),
        );
        let seen = f.cloud.observe(&VmHandle("0".into())).unwrap();
        assert_eq!(seen.state, expected, "({state}, {lcm_state})");
        if expected == VmState::Failed && state != 11 {
            assert!(seen.message.contains(&format!("LCM_STATE {lcm_state}")));
        }
    }
}

#[test]
fn failures_carry_opennebulas_error_text() {
    let f = fixture();
    let seen = observe_recorded(&f, "vm.info-boot-failure");
    assert_eq!(seen.state, VmState::Failed);
    assert!(
        seen.message
            .contains("DEPLOY: localhost:fails-to-boot:dummy"),
        "{}",
        seen.message
    );
}

#[test]
fn unplaceable_vms_fail_after_the_placement_deadline() {
    let f = fixture_with(|c| c.placement_deadline_secs = 600);
    let seen = observe_recorded(&f, "vm.info-pending-unplaceable");
    assert_eq!(seen.state, VmState::Pending);
    assert!(
        seen.message.contains("Not enough MEMORY"),
        "{}",
        seen.message
    );
    f.now.fetch_add(600, Ordering::SeqCst);
    assert_eq!(
        observe_recorded(&f, "vm.info-pending-unplaceable").state,
        VmState::Pending
    );
    f.now.fetch_add(1, Ordering::SeqCst);
    let seen = observe_recorded(&f, "vm.info-pending-unplaceable");
    assert_eq!(seen.state, VmState::Failed);
    assert!(seen.message.contains("within 600 s"), "{}", seen.message);
    assert!(
        seen.message
            .contains("[HOST] Not enough MEMORY on hosts: 0")
    );
}

#[test]
fn addresses_tell_link_networks_from_the_control_network() {
    let f = fixture();
    let seen = observe_recorded(&f, "vm.info-running");
    assert_eq!(
        seen.addresses,
        [NicAddress {
            network: None,
            ip: "10.10.0.10".into(),
            mac: "02:00:0a:0a:00:0a".into(),
            netmask: Some("255.255.255.0".into()),
        }]
    );
    assert_eq!(seen.hostname, "10.10.0.10", "no domain: the address");

    let f = fixture_with(|c| c.domain = Some("vms.example.org".into()));
    let mut spec = spec();
    spec.name = "Node_A".into();
    spec.networks = vec![NicSpec {
        network: NetHandle("0".into()),
        ip: None,
    }];
    let context = SliverContext::new(0, &spec).merge(&[]);
    f.rpc
        .document("one.vm.info", &vm_with_context("vm.info-running", &context));
    let seen = f.cloud.observe(&VmHandle("0".into())).unwrap();
    assert_eq!(seen.addresses[0].network, Some(NetHandle("0".into())));
    assert_eq!(
        seen.addresses[0].netmask, None,
        "no ETH0_MASK in this CONTEXT"
    );
    assert_eq!(seen.hostname, "node-a-0.vms.example.org");
}

fn action_of(sent: &[Sent]) -> Vec<Param> {
    sent.iter()
        .find(|s| s.method == "one.vm.action")
        .expect("an action")
        .params
        .clone()
}

#[test]
fn power_actions_send_the_action_before_the_id() {
    let f = fixture();
    f.rpc
        .document(
            "one.vm.info",
            &with_state("vm.info-vm1-pending_lcm_init", 2, 0),
        )
        .id("one.vm.action", 0);
    f.cloud.start(&VmHandle("0".into())).unwrap();
    assert_eq!(
        action_of(&f.rpc.take_sent()),
        [Param::Str("release".into()), Param::Int(0)]
    );

    f.rpc
        .document("one.vm.info", &with_state("vm.info-running", 8, 0))
        .recorded("one.vm.action", "vm.action-resume");
    f.cloud.start(&VmHandle("0".into())).unwrap();
    assert_eq!(
        action_of(&f.rpc.take_sent()),
        [Param::Str("resume".into()), Param::Int(0)]
    );

    f.rpc
        .document("one.vm.info", &with_state("vm.info-running", 3, 16))
        .id("one.vm.action", 0);
    f.cloud.start(&VmHandle("0".into())).unwrap();
    assert_eq!(
        action_of(&f.rpc.take_sent()),
        [Param::Str("resume".into()), Param::Int(0)],
        "a VM monitoring lost is resumed"
    );

    f.rpc.recorded("one.vm.info", "vm.info-running");
    f.cloud.start(&VmHandle("0".into())).unwrap();
    assert_eq!(f.rpc.take_methods(), ["one.vm.info"], "already on");

    f.rpc.recorded("one.vm.action", "vm.action-poweroff");
    f.cloud.stop(&VmHandle("0".into())).unwrap();
    assert_eq!(
        action_of(&f.rpc.take_sent()),
        [Param::Str("poweroff".into()), Param::Int(0)]
    );

    f.rpc.recorded("one.vm.action", "vm.action-reboot");
    f.cloud.restart(&VmHandle("0".into())).unwrap();
    assert_eq!(
        action_of(&f.rpc.take_sent()),
        [Param::Str("reboot".into()), Param::Int(0)]
    );

    f.rpc
        .recorded("one.vm.action", "vm.action-terminate-hard")
        .recorded("one.vm.action", "quirk.vm-action-terminate-hard-on-done")
        .recorded("one.vm.action", "err.vm-action-no-such-id");
    for _ in 0..3 {
        f.cloud.destroy(&VmHandle("0".into())).unwrap();
    }
    for sent in f.rpc.take_sent() {
        assert_eq!(
            sent.params,
            [Param::Str("terminate-hard".into()), Param::Int(0)]
        );
    }
    assert!(f.rpc.is_done());
}

#[test]
fn refused_actions_are_transient_only_between_states() {
    let f = fixture();
    let vm = VmHandle("0".into());
    f.rpc
        .recorded("one.vm.action", "err.vm-action-wrong-state")
        .recorded("one.vm.info", "vm.info-vm1-active_boot");
    assert!(f.cloud.restart(&vm).unwrap_err().is_transient());
    f.rpc
        .recorded("one.vm.action", "err.vm-action-wrong-state")
        .document("one.vm.info", &with_state("vm.info-running", 8, 0));
    let err = f.cloud.restart(&vm).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Permanent);
    assert!(
        err.to_string().contains("not available for state RUNNING"),
        "{err}"
    );
    f.rpc
        .recorded("one.vm.action", "err.vm-action-wrong-state")
        .document("one.vm.info", &with_state("vm.info-running", 8, 0));
    f.cloud.stop(&vm).unwrap();
    f.rpc.recorded("one.vm.action", "err.vm-action-wrong-state");
    assert!(f.cloud.destroy(&vm).unwrap_err().is_transient());
    f.rpc.recorded("one.vm.info", "err.vm-info-no-such-id");
    assert_eq!(
        f.cloud.start(&VmHandle("99999".into())).unwrap_err(),
        BackendError::NotFound {
            kind: "VM",
            id: "99999".into()
        }
    );
}

#[test]
fn each_error_class_maps() {
    let refused = |code: i64, message: &str| RpcError::Refused {
        method: "one.template.instantiate".into(),
        code: ErrorCode::from_code(code),
        message: message.into(),
        object: None,
    };
    let cases = [
        (
            Err(refused(
                512,
                "[one.template.instantiate] User [2] : user [2] limit of 1 reached for RUNNING_VMS quota in VM.",
            )),
            ErrorClass::Capacity,
        ),
        (
            super::super::testing::recorded("err.vm-allocate-syntax", "one.template.instantiate"),
            ErrorClass::Permanent,
        ),
        (
            super::super::testing::recorded("err.wrong-param-type", "one.template.instantiate"),
            ErrorClass::Permanent,
        ),
        (
            Err(refused(
                0x8000,
                "The resource virtual machine template is locked. [0].",
            )),
            ErrorClass::Transient,
        ),
        (
            Err(RpcError::Transport {
                method: "one.template.instantiate".into(),
                detail: "connection refused".into(),
            }),
            ErrorClass::Transient,
        ),
    ];
    for (reply, class) in cases {
        let f = fixture();
        script_reads(&f.rpc).reply("one.template.instantiate", reply.clone());
        let err = f.cloud.create_vm(&spec()).unwrap_err();
        assert_eq!(err.class(), class, "{reply:?}");
        let fresh = fixture();
        fresh.rpc.recorded("one.vm.info", "err.bad-password");
        let err = fresh.cloud.observe(&VmHandle("0".into())).unwrap_err();
        assert_eq!(err.class(), ErrorClass::Permanent);
        assert!(
            err.to_string().contains("couldn't be authenticated"),
            "{err}"
        );
    }
    let f = fixture_with(|c| c.sliver_types[0].template_id = 4242);
    f.rpc
        .recorded("one.vmpool.info", "vmpool.info-empty")
        .recorded("one.template.info", "err.template-instantiate-no-such-id");
    let err = f.cloud.create_vm(&spec()).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Permanent);
    assert!(err.to_string().contains("template 4242"), "{err}");
}

#[test]
fn user_updates_resend_the_whole_context_with_the_arity_of_the_version() {
    for (version, params) in [("7.4.0", 3), ("5.12.0", 2)] {
        let f = fixture();
        let context = SliverContext::new(0, &spec()).merge(&[("NETWORK".into(), "YES".into())]);
        f.rpc
            .document("one.vm.info", &vm_with_context("vm.info-running", &context))
            .recorded("one.template.info", "template.info")
            .document("one.system.version", version)
            .id("one.vm.updateconf", 0);
        let carol = user("carol", "ssh-ed25519 CCCC carol");
        let bob = user("bob", "ssh-ed25519 NEWB bob");
        f.cloud
            .update_users(&VmHandle("0".into()), &[bob, carol])
            .unwrap();
        let sent = f.rpc.take_sent();
        let update = sent.last().unwrap();
        assert_eq!(update.method, "one.vm.updateconf");
        assert_eq!(update.params.len(), params, "{version}");
        assert_eq!(update.params[0], Param::Int(0));
        if params == 3 {
            assert_eq!(update.params[2], Param::Int(1), "merge");
        }
        let Param::Str(xml) = &update.params[1] else {
            panic!("a template")
        };
        let template = parse_extra_template(xml);
        assert_eq!(value_at(&template, "CONTEXT/NETWORK"), Some("YES"));
        assert_eq!(
            value_at(&template, "CONTEXT/SSH_PUBLIC_KEY"),
            Some("ssh-ed25519 AAAA alice@laptop"),
            "bob's and carol's keys go to their own logins"
        );
        assert!(paths(&template).iter().all(|p| p.starts_with("CONTEXT/")));
    }
}

#[test]
fn link_networks_are_reserved_once_per_tag_and_freed() {
    let f = fixture();
    let spec = NetSpec {
        tag: "urn:publicid:IDN+am.example+sliver+lan0".into(),
        name: "lan0".into(),
        addresses: Vec::new(),
    };
    // A reservation of a VXLAN parent with VLAN_ID 3 is carried by VLAN 3.
    let tagged = |doc: &str| {
        payload(doc)
            .replacen("<ID>0</ID>", "<ID>3</ID>", 1)
            .replacen("<VLAN_ID/>", "<VLAN_ID><![CDATA[3]]></VLAN_ID>", 1)
    };
    let on_vlan_3 = LinkNetwork {
        handle: NetHandle("3".into()),
        vlan_tag: Some(3),
    };
    f.rpc
        .recorded("one.vnpool.info", "vnpool.info")
        .id("one.vn.reserve", 3)
        .document("one.vn.info", &tagged("vn.info"));
    assert_eq!(f.cloud.create_network(&spec).unwrap(), on_vlan_3);
    let sent = f.rpc.take_sent();
    assert_eq!(sent[2].params, [Param::Int(3)], "the reservation read back");
    assert_eq!(sent[1].params[0], Param::Int(0), "the parent network");
    let Param::Str(xml) = &sent[1].params[1] else {
        panic!("a template")
    };
    let name = names::network_name("geni-am", &spec.tag);
    assert_eq!(
        parse_extra_template(xml),
        [
            ("NAME".to_owned(), name.clone()),
            ("SIZE".to_owned(), "16".to_owned())
        ]
    );
    let known =
        tagged("vnpool.info").replacen("<NAME>geni-net</NAME>", &format!("<NAME>{name}</NAME>"), 1);
    f.rpc.document("one.vnpool.info", &known);
    assert_eq!(f.cloud.create_network(&spec).unwrap(), on_vlan_3);
    assert_eq!(
        f.rpc.take_methods(),
        ["one.vnpool.info"],
        "found by its name"
    );

    let in_use = RpcError::Refused {
        method: "one.vn.delete".into(),
        code: ErrorCode::Action,
        message: "[one.vn.delete] Cannot delete virtual network. Can not remove a virtual network with leases in use".into(),
        object: None,
    };
    f.rpc
        .id("one.vn.delete", 3)
        .recorded("one.vn.delete", "err.vn-info-no-such-id")
        .reply("one.vn.delete", Err(in_use));
    f.cloud.destroy_network(&NetHandle("3".into())).unwrap();
    f.cloud.destroy_network(&NetHandle("3".into())).unwrap();
    assert!(
        f.cloud
            .destroy_network(&NetHandle("3".into()))
            .unwrap_err()
            .is_transient()
    );
}

#[test]
fn a_requested_address_that_is_taken_fails_the_vm_instead_of_another_address() {
    let f = fixture();
    let mut spec = spec();
    spec.networks = vec![NicSpec {
        network: NetHandle("5".into()),
        ip: Some("192.168.5.10".into()),
    }];
    let taken = RpcError::Refused {
        method: "one.template.instantiate".into(),
        code: ErrorCode::Allocate,
        message: "[one.template.instantiate] Error allocating a new virtual machine template. Cannot get IP/MAC lease from virtual network 5.".into(),
        object: None,
    };
    script_reads(&f.rpc).reply("one.template.instantiate", Err(taken));
    let err = f.cloud.create_vm(&spec).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Permanent, "{err}");
    assert!(err.to_string().contains("192.168.5.10"), "{err}");
    let tries = f
        .rpc
        .take_methods()
        .into_iter()
        .filter(|m| m == "one.template.instantiate")
        .count();
    assert_eq!(tries, 1, "no second try without the address");
}

#[test]
fn a_link_with_requested_addresses_reserves_the_block_that_holds_them() {
    let f = fixture();
    let spec = NetSpec {
        tag: "urn:publicid:IDN+am.example+sliver+lan1".into(),
        name: "lan1".into(),
        addresses: vec![
            "10.10.0.40".into(),
            "10.10.0.30".into(),
            "10.10.0.61".into(),
        ],
    };
    f.rpc
        .recorded("one.vnpool.info", "vnpool.info")
        .id("one.vn.reserve", 4)
        .recorded("one.vn.info", "vn.info");
    assert_eq!(
        f.cloud.create_network(&spec).unwrap(),
        LinkNetwork {
            handle: NetHandle("4".into()),
            vlan_tag: None,
        },
        "an untagged parent: an untagged reservation"
    );
    let sent = f.rpc.take_sent();
    let Param::Str(xml) = &sent[1].params[1] else {
        panic!("a template")
    };
    let reservation = parse_extra_template(xml);
    assert_eq!(
        value_at(&reservation, "IP"),
        Some("10.10.0.30"),
        "the lowest"
    );
    assert_eq!(value_at(&reservation, "SIZE"), Some("32"), "30 to 61");

    let refused = RpcError::Refused {
        method: "one.vn.reserve".into(),
        code: ErrorCode::Action,
        message: "[one.vn.reserve] Cannot reserve addresses from virtual network 0. Not enough free addresses in an address range".into(),
        object: None,
    };
    f.rpc
        .recorded("one.vnpool.info", "vnpool.info")
        .reply("one.vn.reserve", Err(refused));
    let err = f.cloud.create_network(&spec).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Permanent, "{err}");
    assert!(err.to_string().contains("10.10.0.30–10.10.0.61"), "{err}");

    let bad = NetSpec {
        addresses: vec!["10.10.0.300".into()],
        ..spec
    };
    f.rpc.recorded("one.vnpool.info", "vnpool.info");
    let err = f.cloud.create_network(&bad).unwrap_err();
    assert!(err.to_string().contains("`10.10.0.300`"), "{err}");
}

#[test]
fn a_block_that_would_run_past_the_parents_range_shrinks_to_the_requested_addresses() {
    let f = fixture();
    // Two addresses near the end of the recorded range (10.10.0.10–109):
    // the configured 16 from the first would end at 10.10.0.115.
    let spec = NetSpec {
        tag: "urn:publicid:IDN+am.example+sliver+lan1".into(),
        name: "lan1".into(),
        addresses: vec!["10.10.0.101".into(), "10.10.0.100".into()],
    };
    let refused = RpcError::Refused {
        method: "one.vn.reserve".into(),
        code: ErrorCode::Action,
        message: "[one.vn.reserve] Cannot reserve addresses from virtual network 0. Not enough free addresses in an address range".into(),
        object: None,
    };
    f.rpc
        .recorded("one.vnpool.info", "vnpool.info")
        .reply("one.vn.reserve", Err(refused))
        .id("one.vn.reserve", 4)
        .recorded("one.vn.info", "vn.info");
    assert_eq!(
        f.cloud.create_network(&spec).unwrap().handle,
        NetHandle("4".into())
    );
    let sizes: Vec<(Option<String>, Option<String>)> = f
        .rpc
        .take_sent()
        .iter()
        .filter(|call| call.method == "one.vn.reserve")
        .map(|call| {
            let Param::Str(xml) = &call.params[1] else {
                panic!("a template")
            };
            let reservation = parse_extra_template(xml);
            (
                value_at(&reservation, "IP").map(str::to_owned),
                value_at(&reservation, "SIZE").map(str::to_owned),
            )
        })
        .collect();
    let at_first = |size: &str| (Some("10.10.0.100".to_owned()), Some(size.to_owned()));
    assert_eq!(sizes, [at_first("16"), at_first("2")]);
}
