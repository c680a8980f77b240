//! The XML-RPC request decoder (`geni_xmlrpc::decode_call`: size check,
//! line-end normalisation, the structural pre-scan that refuses DTDs,
//! entities and misplaced elements, then dxr) against dxr's plain
//! `MethodCall::from_xml` on the same bodies as the baseline, on calls
//! carrying real data of the corpus: an Allocate with the largest request
//! RSpec and a slice credential, and a ListResources with a credential.

use criterion::{Criterion, criterion_group, criterion_main};
use geni_xmlrpc::{Value, decode_call, encode_call};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;

fn corpus(path: &str) -> String {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// A call with the credential list, optionally an RSpec, and options.
fn body(method: &str, credential: &str, rspec: Option<&str>) -> String {
    let credential = Value::Struct(BTreeMap::from([
        ("geni_type".to_owned(), Value::String("geni_sfa".into())),
        ("geni_version".to_owned(), Value::String("3".into())),
        ("geni_value".to_owned(), Value::String(credential.into())),
    ]));
    let mut params = vec![Value::Array(vec![credential])];
    if let Some(rspec) = rspec {
        params.insert(
            0,
            Value::String("urn:publicid:IDN+geni-am.test+slice+demo".into()),
        );
        params.push(Value::String(rspec.into()));
    }
    params.push(Value::Struct(BTreeMap::from([
        ("geni_available".to_owned(), Value::Boolean(true)),
        ("geni_compressed".to_owned(), Value::Boolean(true)),
    ])));
    encode_call(method, &params).unwrap()
}

fn bench(c: &mut Criterion) {
    let credential = corpus("creds/credentials/felix__alice-cred.xml");
    let rspec = corpus("rspec/request/geni-tutorials__7router-3am-xorp-labwiki-stitching.rspec");
    let cases = [
        ("allocate", body("Allocate", &credential, Some(&rspec))),
        ("listresources", body("ListResources", &credential, None)),
    ];
    for (name, text) in &cases {
        let mut group = c.benchmark_group(format!("xmlrpc/{name} ({} bytes)", text.len()));
        group.bench_function("dxr from_xml (baseline)", |b| {
            b.iter(|| dxr::MethodCall::from_xml(black_box(text)).unwrap())
        });
        group.bench_function("decode_call", |b| {
            b.iter(|| decode_call(black_box(text.as_bytes()), 16 << 20).unwrap())
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
