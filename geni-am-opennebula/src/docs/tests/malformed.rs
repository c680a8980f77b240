//! Hostile and broken documents are errors that say what is wrong, never
//! panics.

use super::super::*;
use super::recorded_call;

fn problem<T: std::fmt::Debug>(result: Result<T, DocError>) -> DocProblem {
    result.expect_err("the document must be refused").problem
}

#[test]
fn missing_id_names_the_element_path() {
    let err = parse_vm("<VM><STATE>1</STATE><LCM_STATE>0</LCM_STATE></VM>").unwrap_err();
    assert_eq!(err.document, "VM");
    assert!(
        matches!(&err.problem, DocProblem::Missing { path, .. } if path == "VM/ID"),
        "{err}"
    );
    let pool = "<VM_POOL><VM><ID>1</ID><STATE>1</STATE><LCM_STATE>0</LCM_STATE></VM>\
                <VM><ID>2</ID><LCM_STATE>0</LCM_STATE></VM></VM_POOL>";
    let err = parse_vm_pool(pool).unwrap_err();
    assert_eq!(
        err.to_string(),
        "OpenNebula VM_POOL document: line 1: required element VM_POOL/VM[2]/STATE is missing or empty"
    );
    assert!(
        matches!(problem(parse_host("<HOST><ID>1</ID><STATE>2</STATE></HOST>")),
        DocProblem::Missing { path, .. } if path == "HOST/HOST_SHARE")
    );
}

#[test]
fn non_numeric_values_are_refused_with_what_was_found() {
    let err =
        parse_vm("<VM><ID>1</ID><STATE>ACTIVE</STATE><LCM_STATE>3</LCM_STATE></VM>").unwrap_err();
    assert!(
        matches!(&err.problem, DocProblem::NotANumber { path, value, .. } if path == "VM/STATE" && value == "ACTIVE"),
        "{err}"
    );
    let nic = "<VM><ID>1</ID><STATE>3</STATE><LCM_STATE>3</LCM_STATE><TEMPLATE><NIC><NIC_ID>0</NIC_ID></NIC>\
               <NIC><NETWORK_ID><![CDATA[x]]></NETWORK_ID></NIC></TEMPLATE></VM>";
    assert!(matches!(problem(parse_vm(nic)),
        DocProblem::NotANumber { path, .. } if path == "VM/TEMPLATE/NIC[2]/NETWORK_ID"));
}

#[test]
fn doctype_and_entities_are_refused() {
    let bomb = "<?xml version=\"1.0\"?><!DOCTYPE VM [<!ENTITY a \"aaaa\">]>\
                <VM><ID>1</ID><STATE>1</STATE><LCM_STATE>0</LCM_STATE><NAME>&a;</NAME></VM>";
    assert!(matches!(problem(parse_vm(bomb)), DocProblem::Malformed(_)));
    let external = "<VM><ID>1</ID><STATE>1</STATE><LCM_STATE>0</LCM_STATE><NAME>&xxe;</NAME></VM>";
    assert!(matches!(
        problem(parse_vm(external)),
        DocProblem::Malformed(_)
    ));
}

#[test]
fn every_truncation_of_a_recorded_document_is_an_error_not_a_panic() {
    let (_, exact) = recorded_call("vm.info-running");
    let cuts = (0..exact.len())
        .step_by(7)
        .filter(|&i| exact.is_char_boundary(i));
    for cut in cuts {
        assert!(
            parse_vm(&exact[..cut]).is_err(),
            "truncated at {cut} accepted"
        );
    }
    let (_, pool) = recorded_call("hostpool.info-with-vm");
    for cut in (0..pool.len())
        .step_by(11)
        .filter(|&i| pool.is_char_boundary(i))
    {
        assert!(
            parse_host_pool(&pool[..cut]).is_err(),
            "truncated at {cut} accepted"
        );
    }
}

#[test]
fn the_wrong_kind_of_document_is_named() {
    let (_, host) = recorded_call("host.info");
    let err = parse_vm(&host).unwrap_err();
    assert_eq!(
        err.to_string(),
        "OpenNebula VM document: the root element is <HOST>, expected <VM>"
    );
    assert!(matches!(
        problem(parse_vm_pool("")),
        DocProblem::Malformed(_)
    ));
    assert!(matches!(
        problem(parse_user("not xml")),
        DocProblem::Malformed(_)
    ));
}

#[test]
fn excessive_nesting_is_refused() {
    let deep = format!("<VM>{}{}</VM>", "<A>".repeat(100), "</A>".repeat(100));
    assert!(matches!(problem(parse_vm(&deep)), DocProblem::Malformed(_)));
}
