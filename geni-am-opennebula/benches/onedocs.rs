//! The OpenNebula document parsers (`geni_am_opennebula::docs`) on the
//! exact strings a 7.4.0 oned sent: one full VM body, and extended VM pools
//! of 100 and 1000 copies of it (what a large site's poll returns), plus the
//! host pool.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use geni_am_opennebula::docs::{parse_host_pool, parse_vm, parse_vm_pool};
use geni_am_opennebula::rpc::Answer;
use geni_am_opennebula::rpc::wire::decode_response;
use std::hint::black_box;
use std::path::PathBuf;

/// Element `[1]` of recorded 7.4.0 reply `name`.
fn recorded(name: &str) -> String {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/opennebula/recorded/oned-7.4.0")
        .join(format!("{name}.response.xml"));
    let body = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    match decode_response(name, &body, usize::MAX) {
        Ok(Answer::Str(document)) => document,
        other => panic!("{name}: {other:?}"),
    }
}

/// A `<VM_POOL>` of `n` copies of `vm`, numbered from 0.
fn pool(vm: &str, n: usize) -> String {
    let body = vm.replacen("<ID>0</ID>", "<ID>{}</ID>", 1);
    let members: String = (0..n).map(|i| body.replace("{}", &i.to_string())).collect();
    format!("<VM_POOL>{members}</VM_POOL>")
}

fn bench_docs(c: &mut Criterion) {
    let vm = recorded("vm.info-running");
    c.bench_function("parse_vm/vm.info-running", |b| {
        b.iter(|| parse_vm(black_box(&vm)).unwrap())
    });
    let mut group = c.benchmark_group("parse_vm_pool/extended");
    for n in [100, 1000] {
        let xml = pool(&vm, n);
        assert_eq!(parse_vm_pool(&xml).unwrap().len(), n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &xml, |b, xml| {
            b.iter(|| parse_vm_pool(black_box(xml)).unwrap())
        });
    }
    group.finish();
    let hosts = recorded("hostpool.info-with-vm");
    c.bench_function("parse_host_pool/hostpool.info-with-vm", |b| {
        b.iter(|| parse_host_pool(black_box(&hosts)).unwrap())
    });
}

criterion_group!(benches, bench_docs);
criterion_main!(benches);
