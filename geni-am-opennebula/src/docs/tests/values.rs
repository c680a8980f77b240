//! Values read from representative recorded documents, each checked in
//! both the pretty-printed payload and the exact string oned sent.

use super::super::*;
use super::{recorded, recorded_call};

/// Runs `check` on both renderings of recorded 7.4.0 call `name`.
fn both(name: &str, check: impl Fn(&str)) {
    let (payload, exact) = recorded_call(name);
    check(&payload);
    check(&exact);
}

fn value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn running_vm_has_its_nic_context_host_and_custom_attribute() {
    both("vm.info-running", |xml| {
        let vm = parse_vm(xml).unwrap();
        assert_eq!((vm.id, vm.name.as_str(), vm.uid), (0, "geni-sliver-1", 0));
        assert_eq!(
            (vm.state, vm.lcm_state, vm.phase()),
            (3, 3, VmPhase::Running)
        );
        assert_eq!((vm.stime, vm.etime), (1795282660, 0));
        assert_eq!(
            vm.nics,
            vec![NicDoc {
                nic_id: 0,
                network_id: Some(0),
                network: "geni-net".into(),
                ip: Some("10.10.0.10".into()),
                mac: Some("02:00:0a:0a:00:0a".into()),
            }]
        );
        assert_eq!(
            value(&vm.context, "SSH_PUBLIC_KEY"),
            Some(
                "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGeniTestKeyOnlyNotARealKey0000000000000 \
                 geni-user@example.org"
            )
        );
        assert_eq!(value(&vm.context, "ETH0_IP"), Some("10.10.0.10"));
        // Empty context values are kept as empty, in document order.
        assert_eq!(value(&vm.context, "ETH0_IP6"), Some(""));
        assert_eq!(vm.context.first().map(|(n, _)| n.as_str()), Some("DISK_ID"));
        assert_eq!(
            vm.user_template,
            vec![(
                "GENI_SLICE_URN".to_string(),
                "urn:publicid:IDN+example.org+slice+test".to_string()
            )]
        );
        assert_eq!(vm.host, Some((0, "localhost".to_string())));
        assert_eq!(
            (&vm.error, &vm.sched_message, &vm.labels),
            (&None, &None, &None)
        );
        assert_eq!(vm.failure_message(), None);
    });
}

#[test]
fn boot_failure_reports_the_driver_error_with_its_date() {
    both("vm.info-boot-failure", |xml| {
        let vm = parse_vm(xml).unwrap();
        assert_eq!(
            (vm.state, vm.lcm_state, vm.phase()),
            (3, 36, VmPhase::Failed)
        );
        assert_eq!(
            vm.failure_message().as_deref(),
            Some("Sat Nov 21 17:38:17 2026: DEPLOY: localhost:fails-to-boot:dummy")
        );
    });
}

#[test]
fn unplaceable_vm_reports_the_scheduler_message() {
    both("vm.info-pending-unplaceable", |xml| {
        let vm = parse_vm(xml).unwrap();
        assert_eq!(
            (vm.state, vm.phase(), vm.host.clone()),
            (1, VmPhase::Pending, None)
        );
        assert_eq!(
            vm.failure_message().as_deref(),
            Some("Sat Nov 21 17:38:06 2026: [HOST] Not enough MEMORY on hosts: 0")
        );
        assert_eq!(vm.error, None);
    });
}

#[test]
fn done_vm_reads_as_done_with_an_end_time() {
    both("vm.info-done", |xml| {
        let vm = parse_vm(xml).unwrap();
        assert_eq!(vm.phase(), VmPhase::Done);
        assert!(vm.etime >= vm.stime && vm.etime > 0, "{vm:?}");
    });
}

#[test]
fn reduced_pool_bodies_lack_context_and_custom_attributes_extended_ones_have_them() {
    both("vmpool.info-running", |xml| {
        let pool = parse_vm_pool(xml).unwrap();
        assert_eq!(pool.len(), 1);
        let vm = &pool[0];
        assert_eq!((vm.id, vm.phase()), (0, VmPhase::Running));
        assert!(
            vm.context.is_empty() && vm.user_template.is_empty(),
            "{vm:?}"
        );
        assert_eq!(vm.nics[0].ip.as_deref(), Some("10.10.0.10"));
        assert_eq!(vm.host, Some((0, "localhost".to_string())));
        // CPU 0.5 and MEMORY 256: what the host's CPU_USAGE/MEM_USAGE count.
        assert_eq!((vm.cpu_share, vm.memory_mib), (50, 256));
        assert!(vm.holds_capacity());
    });
    both("vmpool.infoextended-running", |xml| {
        let vm = &parse_vm_pool(xml).unwrap()[0];
        assert_eq!(vm.nics[0].mac.as_deref(), Some("02:00:0a:0a:00:0a"));
        assert!(value(&vm.context, "SSH_PUBLIC_KEY").is_some(), "{vm:?}");
        assert_eq!(
            value(&vm.user_template, "GENI_SLIVER_URN"),
            Some("urn:publicid:IDN+example.org+sliver+1")
        );
    });
}

#[test]
fn empty_pools_are_empty_lists() {
    both("vmpool.info-empty", |xml| {
        assert_eq!(parse_vm_pool(xml), Ok(vec![]))
    });
    assert_eq!(parse_vm_pool("<VM_POOL></VM_POOL>"), Ok(vec![]));
    assert_eq!(parse_host_pool("<HOST_POOL/>"), Ok(vec![]));
    assert_eq!(parse_vnet_pool("<VNET_POOL>\n</VNET_POOL>"), Ok(vec![]));
}

#[test]
fn a_placed_vm_takes_its_allocation_from_the_host() {
    let free = |xml: &str| {
        let hosts = parse_host_pool(xml).unwrap();
        assert_eq!(hosts.len(), 1);
        let host = &hosts[0];
        assert!(host.is_usable(), "{host:?}");
        (host.free_cpus(), host.free_mem_mib(), host.running_vms)
    };
    both("hostpool.info", |xml| {
        assert_eq!(free(xml), (8.0, 16384, 0))
    });
    // The running VM has CPU 0.5 and MEMORY 256 (MiB).
    both("hostpool.info-with-vm", |xml| {
        assert_eq!(free(xml), (7.5, 16128, 1))
    });
    both("host.info", |xml| {
        let host = parse_host(xml).unwrap();
        assert_eq!(
            (host.id, host.name.as_str(), host.cluster_id),
            (0, "localhost", 0)
        );
    });
}

#[test]
fn hosts_of_5_x_and_2_x_read_capacity_from_max_and_usage() {
    let host = parse_host(&recorded("pyone-5.4/host_01.xml")).unwrap();
    assert_eq!(
        (host.state, host.max_cpu, host.max_mem_kib),
        (2, 100, 1020364)
    );
    assert_eq!(
        (host.free_cpus(), host.free_mem_mib()),
        (1.0, 1020364 / 1024)
    );
    let legacy = parse_host(&recorded("oca-ruby-legacy/host.xml")).unwrap();
    assert_eq!(
        (legacy.id, legacy.cluster_id, legacy.running_vms),
        (7, -1, 3)
    );
    // MAX − USAGE, not the measured FREE_* (which say 800 / 16 GiB here).
    assert_eq!((legacy.free_cpus(), legacy.free_mem_mib()), (5.0, 14848));
}

#[test]
fn the_hypervisor_is_the_monitored_one_else_the_drivers_of_the_host() {
    both("host.info", |xml| {
        assert_eq!(
            parse_host(xml).unwrap().hypervisor.as_deref(),
            Some("dummy")
        );
    });
    let kvm = parse_host(&recorded("pyone-5.4/host_01.xml")).unwrap();
    assert_eq!(kvm.hypervisor.as_deref(), Some("kvm"));
    // The legacy body's VM_MAD is `vmm_dummy`; its monitored HYPERVISOR wins.
    let legacy = parse_host(&recorded("oca-ruby-legacy/host.xml")).unwrap();
    assert_eq!(legacy.hypervisor.as_deref(), Some("dummy"));
    let share = "<HOST_SHARE><MAX_CPU>0</MAX_CPU><CPU_USAGE>0</CPU_USAGE>\
        <MAX_MEM>0</MAX_MEM><MEM_USAGE>0</MEM_USAGE></HOST_SHARE>";
    let unmonitored = format!(
        "<HOST><ID>3</ID><STATE>0</STATE><IM_MAD>kvm</IM_MAD><VM_MAD>lxc</VM_MAD>\
         {share}<TEMPLATE><HYPERVISOR></HYPERVISOR></TEMPLATE></HOST>"
    );
    assert_eq!(
        parse_host(&unmonitored).unwrap().hypervisor.as_deref(),
        Some("lxc")
    );
    let only_im = format!("<HOST><ID>3</ID><STATE>0</STATE><IM_MAD>kvm</IM_MAD>{share}</HOST>");
    assert_eq!(
        parse_host(&only_im).unwrap().hypervisor.as_deref(),
        Some("kvm")
    );
    let none = format!("<HOST><ID>3</ID><STATE>0</STATE>{share}</HOST>");
    assert_eq!(parse_host(&none).unwrap().hypervisor, None);
}

#[test]
fn host_capacity_is_never_negative_and_only_monitored_hosts_are_usable() {
    let host = |state, max_cpu, cpu_usage, max_mem_kib, mem_usage_kib| HostDoc {
        id: 1,
        name: "h".into(),
        state,
        cluster_id: 0,
        max_cpu,
        cpu_usage,
        max_mem_kib,
        mem_usage_kib,
        running_vms: 0,
        hypervisor: None,
    };
    let overcommitted = host(2, 100, 250, 1024, 4096);
    assert_eq!(
        (overcommitted.free_cpus(), overcommitted.free_mem_mib()),
        (0.0, 0)
    );
    let usable: Vec<i64> = (0..=8)
        .filter(|&s| host(s, 0, 0, 0, 0).is_usable())
        .collect();
    assert_eq!(usable, vec![1, 2]);
}

#[test]
fn lease_of_the_running_vm_shows_in_the_network() {
    both("vn.info-with-lease", |xml| {
        let vnet = parse_vnet(xml).unwrap();
        assert_eq!(
            (vnet.id, vnet.name.as_str(), vnet.used_leases),
            (0, "geni-net", 1)
        );
        assert_eq!(vnet.parent_network_id, None);
        assert_eq!(vnet.ars.len(), 1);
        let ar = &vnet.ars[0];
        assert_eq!((ar.ar_id, ar.kind.as_str(), ar.size), (0, "IP4", 100));
        assert_eq!(ar.ip.as_deref(), Some("10.10.0.10"));
        assert_eq!(
            ar.leases,
            vec![LeaseDoc {
                ip: Some("10.10.0.10".into()),
                mac: Some("02:00:0a:0a:00:0a".into()),
                vm: Some(0),
            }]
        );
        assert_eq!(value(&vnet.template, "GATEWAY"), Some("10.10.0.1"));
    });
    both("vn.info", |xml| {
        let vnet = parse_vnet(xml).unwrap();
        assert_eq!(vnet.used_leases, 0);
        assert!(vnet.ars.iter().all(|ar| ar.leases.is_empty()), "{vnet:?}");
    });
}

#[test]
fn several_nics_and_history_records_of_a_5_4_vm() {
    let vm = parse_vm(&recorded("pyone-5.4/vm_02.xml")).unwrap();
    let nics: Vec<_> = vm
        .nics
        .iter()
        .map(|n| (n.nic_id, n.network_id, n.network.as_str(), n.ip.as_deref()))
        .collect();
    assert_eq!(
        nics,
        vec![
            (0, Some(0), "LAN", Some("192.168.2.77")),
            (1, Some(2), "DATA", Some("192.168.190.3")),
        ]
    );
    let vm = parse_vm(&recorded("pyone-5.4/vm_01.xml")).unwrap();
    assert_eq!((vm.id, vm.phase()), (595, VmPhase::Stopped));
    assert_eq!(vm.host, Some((2, "t110.lan".to_string())));
}

#[test]
fn current_host_is_the_history_with_the_highest_seq_in_any_order() {
    let vm = parse_vm(
        "<VM><ID>5</ID><STATE>3</STATE><LCM_STATE>3</LCM_STATE><HISTORY_RECORDS>\
         <HISTORY><SEQ>1</SEQ><HOSTNAME>new</HOSTNAME><HID>4</HID></HISTORY>\
         <HISTORY><SEQ>0</SEQ><HOSTNAME>old</HOSTNAME><HID>3</HID></HISTORY>\
         </HISTORY_RECORDS></VM>",
    )
    .unwrap();
    assert_eq!(vm.host, Some((4, "new".to_string())));
    assert_eq!(vm.name, "");
    assert!(vm.nics.is_empty() && vm.context.is_empty());
}

#[test]
fn templates_images_and_users_read_their_fields() {
    both("template.info", |xml| {
        let template = parse_template(xml).unwrap();
        assert_eq!(template.name, "geni-small");
        assert_eq!(template.cpu.as_deref(), Some("0.1"));
        assert_eq!(template.memory.as_deref(), Some("128"));
        assert!(template.disks.is_empty(), "{template:?}");
        assert_eq!(
            template.nics,
            vec![vec![("NETWORK_ID".to_string(), "0".to_string())]]
        );
        assert_eq!(
            value(&template.context, "SSH_PUBLIC_KEY"),
            Some("$USER[SSH_PUBLIC_KEY]")
        );
    });
    let legacy = parse_template_pool(&recorded("python-oca-4.x/templatepool.xml")).unwrap();
    assert!(legacy.iter().any(|t| t.nics.len() == 2), "{legacy:?}");
    both("imagepool.info", |xml| {
        let images = parse_image_pool(xml).unwrap();
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].name, "geni-img");
    });
    both("user.info-self", |xml| {
        let user = parse_user(xml).unwrap();
        assert_eq!((user.id, user.name.as_str(), user.gid), (0, "oneadmin", 0));
        assert_eq!(user.groups, vec![0]);
    });
    let legacy = parse_user(&recorded("oca-ruby-legacy/user.xml")).unwrap();
    assert_eq!(
        (legacy.id, legacy.name.as_str(), legacy.gid),
        (3, "dan", -1)
    );
}

#[test]
fn namespaced_5_4_documents_parse() {
    let xml = recorded("pyone-5.4/vnet_01.xml");
    assert!(
        xml.contains("xmlns"),
        "the fixture carries an xmlns attribute"
    );
    let vnet = parse_vnet(&xml).unwrap();
    assert!(!vnet.ars.is_empty(), "{vnet:?}");
}
