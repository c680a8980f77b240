//! Bad YAML documents given to both YAML languages: each is refused with
//! where the problem is, before anything is translated.

use geni_templates::{Inputs, Offer, Refusals, Request, hot, tosca};

type Translate = fn(&str, &str, &Inputs, &Offer) -> Result<Request, Refusals>;

const LANGUAGES: [(&str, Translate, &str); 2] = [
    (
        "t.yml",
        tosca::translate,
        "tosca_definitions_version: tosca_simple_yaml_1_0\n",
    ),
    (
        "h.yaml",
        hot::translate,
        "heat_template_version: 2018-08-31\n",
    ),
];

fn refusal(translate: Translate, source: &str, text: &str) -> geni_templates::Refusal {
    let refusals = translate(source, text, &Inputs::new(), &Offer::default()).unwrap_err();
    assert_eq!(refusals.refusals.len(), 1, "{refusals}");
    refusals.refusals[0].clone()
}

#[test]
fn malformed_yaml_is_refused_with_its_line_and_column() {
    for (source, translate, head) in LANGUAGES {
        let r = refusal(
            translate,
            source,
            &format!("{head}description: [unclosed\nresources: {{}}\n"),
        );
        assert_eq!(r.line, 3, "{source}: {r}");
        assert!(r.column.is_some(), "{source}: {r}");
        assert!(r.message.starts_with("malformed YAML"), "{source}: {r}");
    }
}

#[test]
fn a_template_over_one_mebibyte_is_refused() {
    for (source, translate, head) in LANGUAGES {
        let text = format!("{head}description: '{}'\n", "x".repeat(1 << 20));
        let r = refusal(translate, source, &text);
        assert!(r.message.contains("at most 1048576 bytes"), "{source}: {r}");
    }
}

#[test]
fn a_template_nested_too_deep_is_refused_at_the_line_it_goes_too_deep() {
    for (source, translate, head) in LANGUAGES {
        let mut text = head.to_owned();
        for depth in 0..70 {
            text.push_str(&format!("{}k{depth}:\n", "  ".repeat(depth)));
        }
        let r = refusal(translate, source, &text);
        assert!(r.message.contains("deeper than 64 levels"), "{source}: {r}");
        assert!(r.line > 60, "{source}: {r}");
    }
}

#[test]
fn an_alias_bomb_is_refused_without_expanding_it() {
    for (source, translate, head) in LANGUAGES {
        let mut text = format!("{head}l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for i in 1..12 {
            let p = format!("*l{}", i - 1);
            text.push_str(&format!("l{i}: &l{i} [{}]\n", vec![p; 9].join(", ")));
        }
        let r = refusal(translate, source, &text);
        assert!(
            r.message.contains("more than 100000 nodes"),
            "{source}: {r}"
        );
    }
}
