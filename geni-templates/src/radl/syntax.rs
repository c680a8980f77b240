//! The RADL text form's grammar (winnow): `description`, `ansible`,
//! `network`, `system`, `include` blocks of features joined by `and`,
//! `configure` blocks with `@begin … @end` recipes, `deploy` sentences and
//! the `contextualize` section, with `#` comments anywhere between tokens.
//! The result is the [`Document`] tree the JSON form also becomes; every
//! construct keeps the byte offset it starts at, for messages.

use super::ast::{Block, Count, CtxItem, Document, Feature, Kind, Op, Recipe, Value};
use winnow::ascii::{digit1, multispace1, till_line_ending};
use winnow::combinator::{alt, cut_err, delimited, eof, opt, peek, preceded, repeat, separated};
use winnow::error::{ContextError, ErrMode, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::stream::{LocatingSlice, Location};
use winnow::token::{any, none_of, one_of, take_until, take_while};

type In<'a> = LocatingSlice<&'a str>;
type Res<T> = ModalResult<T>;

/// The words that open a sentence; none of them is an identifier where a
/// sentence may start.
pub(crate) const KEYWORDS: [&str; 8] = [
    "description",
    "ansible",
    "network",
    "system",
    "configure",
    "deploy",
    "contextualize",
    "include",
];

/// A text that is not RADL: where and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SyntaxError {
    /// Byte offset of the error.
    pub offset: usize,
    /// What the parser expected.
    pub message: String,
}

/// Parses a whole RADL text document.
pub(super) fn parse(text: &str) -> Result<Document, SyntaxError> {
    document
        .parse(LocatingSlice::new(text))
        .map_err(|e| SyntaxError {
            offset: e.offset(),
            message: describe(e.inner()),
        })
}

/// `expected …` from the error's contexts.
fn describe(error: &ContextError) -> String {
    let mut label = None;
    let mut expected = Vec::new();
    for context in error.context() {
        match context {
            StrContext::Label(l) => label = label.or(Some(*l)),
            StrContext::Expected(StrContextValue::CharLiteral(c)) => {
                expected.push(format!("'{c}'"))
            }
            StrContext::Expected(StrContextValue::StringLiteral(s)) => {
                expected.push(format!("'{s}'"))
            }
            StrContext::Expected(StrContextValue::Description(d)) => expected.push((*d).into()),
            _ => {}
        }
    }
    let what = if expected.is_empty() {
        "a RADL sentence (description, network, system, configure, deploy, contextualize)"
            .to_owned()
    } else {
        expected.join(" or ")
    };
    match label {
        Some(label) => format!("malformed RADL in {label}: expected {what}"),
        None => format!("malformed RADL: expected {what}"),
    }
}

/// Whitespace and `#` comments.
fn ws(input: &mut In<'_>) -> Res<()> {
    repeat(
        0..,
        alt((multispace1.void(), ('#', till_line_ending).void())),
    )
    .parse_next(input)
}

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

/// An identifier: letters, digits, `_`, `-` and `.`, not starting with a
/// digit.
fn identifier<'a>(input: &mut In<'a>) -> Res<&'a str> {
    (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(0.., |c: char| {
            c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
        }),
    )
        .take()
        .parse_next(input)
}

/// A feature name: `cpu.count`, `net_interface.0.connection`, ….
fn feature_name<'a>(input: &mut In<'a>) -> Res<&'a str> {
    (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(0.., |c: char| {
            c.is_ascii_alphanumeric() || c == '_' || c == '.'
        }),
    )
        .take()
        .parse_next(input)
}

/// A quoted string, `'…'` or `"…"`, with backslash escapes; it may span
/// lines.
fn string(input: &mut In<'_>) -> Res<String> {
    let quote = one_of(['\'', '"']).parse_next(input)?;
    let mut out = String::new();
    loop {
        let c = cut_err(any)
            .context(expected("the closing quote"))
            .parse_next(input)?;
        if c == quote {
            return Ok(out);
        }
        if c == '\\' {
            let escaped = cut_err(any)
                .context(expected("an escaped character"))
                .parse_next(input)?;
            out.push(match escaped {
                'n' => '\n',
                't' => '\t',
                other => other,
            });
        } else {
            out.push(c);
        }
    }
}

/// `@input.NAME@`: a value given when the document is deployed.
fn input_reference(input: &mut In<'_>) -> Res<String> {
    delimited(
        "@input.",
        cut_err(take_while(1.., |c: char| c != '@' && !c.is_whitespace()))
            .context(expected("an input name")),
        cut_err('@').context(StrContext::Expected('@'.into())),
    )
    .map(str::to_owned)
    .parse_next(input)
}

/// A number with an optional unit: `2`, `0.5`, `1024m`, `100GB`.
fn number(input: &mut In<'_>) -> Res<Value> {
    let digits = (digit1, opt(('.', digit1))).take().parse_next(input)?;
    let unit: &str = take_while(0.., |c: char| c.is_ascii_alphabetic()).parse_next(input)?;
    let value = digits
        .parse::<f64>()
        .map_err(|_| ErrMode::Cut(ContextError::new()))?;
    Ok(Value::Number {
        value,
        unit: (!unit.is_empty()).then(|| unit.to_owned()),
    })
}

/// A comparison operator.
fn op(input: &mut In<'_>) -> Res<Op> {
    alt((
        alt((">=", "=>")).value(Op::Ge),
        alt(("<=", "=<")).value(Op::Le),
        "=".value(Op::Eq),
        "<".value(Op::Lt),
        ">".value(Op::Gt),
        (
            "contains",
            peek(none_of(|c: char| c.is_ascii_alphanumeric() || c == '_')),
        )
            .value(Op::Contains),
    ))
    .parse_next(input)
}

/// A simple value: string, input reference, number or bare word.
fn simple_value(input: &mut In<'_>) -> Res<Value> {
    alt((
        string.map(Value::Str),
        input_reference.map(Value::Input),
        number,
        identifier.map(|w| Value::Str(w.to_owned())),
    ))
    .parse_next(input)
}

/// `name op value`; after `contains`, the value may be a parenthesised
/// list of simple features (one level, so nesting depth is bounded by the
/// grammar).
fn feature(input: &mut In<'_>) -> Res<Feature> {
    let at = input.current_token_start();
    let name = feature_name.parse_next(input)?;
    ws(input)?;
    let op = cut_err(op)
        .context(expected("an operator (=, >=, <=, contains)"))
        .parse_next(input)?;
    ws(input)?;
    let value = if op == Op::Contains {
        cut_err(alt((
            delimited(('(', ws), simple_features, (ws, ')')).map(Value::Features),
            simple_value,
        )))
        .context(expected("a value or (features)"))
        .parse_next(input)?
    } else {
        cut_err(simple_value)
            .context(expected("a value"))
            .parse_next(input)?
    };
    Ok(Feature {
        name: name.to_owned(),
        op,
        value,
        at,
    })
}

/// Features inside `contains ( … )`: simple values only, joined by `and`
/// or `,`.
fn simple_features(input: &mut In<'_>) -> Res<Vec<Feature>> {
    separated(
        0..,
        |input: &mut In<'_>| {
            let at = input.current_token_start();
            let name = feature_name.parse_next(input)?;
            ws(input)?;
            let op = cut_err(op).parse_next(input)?;
            ws(input)?;
            let value = cut_err(simple_value).parse_next(input)?;
            Ok(Feature {
                name: name.to_owned(),
                op,
                value,
                at,
            })
        },
        (ws, alt(("and", ",")), ws),
    )
    .parse_next(input)
}

/// `( feature and feature … )`, possibly empty.
fn features(input: &mut In<'_>) -> Res<Vec<Feature>> {
    let open = ('(', ws).void();
    let close = cut_err((ws, ')'))
        .context(StrContext::Expected(')'.into()))
        .context(expected("'and' between features"))
        .void();
    delimited(open, separated(0.., feature, (ws, "and", ws)), close).parse_next(input)
}

/// A block's name.
fn name(input: &mut In<'_>) -> Res<String> {
    preceded(ws, cut_err(identifier).context(expected("a name")))
        .map(str::to_owned)
        .parse_next(input)
}

/// `configure NAME [( @begin … @end )]`.
fn configure(input: &mut In<'_>) -> Res<Kind> {
    let name = name(input)?;
    let checkpoint_ws = ws(input);
    checkpoint_ws?;
    if opt('(').parse_next(input)?.is_none() {
        return Ok(Kind::Configure { name, recipe: None });
    }
    ws(input)?;
    let recipe = opt(|input: &mut In<'_>| {
        "@begin".parse_next(input)?;
        let at = input.current_token_start();
        let text = cut_err(take_until(0.., "@end"))
            .context(expected("@end closing the recipe"))
            .parse_next(input)?;
        "@end".parse_next(input)?;
        Ok(Recipe {
            text: text.to_owned(),
            at,
        })
    })
    .parse_next(input)?;
    cut_err((ws, ')'))
        .context(StrContext::Expected(')'.into()))
        .parse_next(input)?;
    Ok(Kind::Configure { name, recipe })
}

/// `deploy SYSTEM COUNT [CLOUD]`.
fn deploy(input: &mut In<'_>) -> Res<Kind> {
    let system = name(input)?;
    ws(input)?;
    let count = cut_err(alt((
        digit1
            .try_map(|d: &str| d.parse::<u64>())
            .map(Count::Number),
        input_reference.map(Count::Input),
    )))
    .context(expected("the number of VMs"))
    .parse_next(input)?;
    let cloud = opt(preceded(
        (take_while(1.., [' ', '\t']),),
        identifier.verify(|w: &str| !KEYWORDS.contains(&w)),
    ))
    .parse_next(input)?;
    Ok(Kind::Deploy {
        system,
        count,
        cloud: cloud.map(str::to_owned),
    })
}

/// One sentence of `contextualize ( … )`.
fn context_item(input: &mut In<'_>) -> Res<Option<CtxItem>> {
    let at = input.current_token_start();
    alt((
        (
            "option",
            ws,
            cut_err(feature_name),
            ws,
            cut_err('='),
            ws,
            cut_err(simple_value),
        )
            .map(|_| None),
        (
            "system",
            name,
            ws,
            cut_err("configure").context(StrContext::Expected("configure".into())),
            name,
            opt(preceded((ws, "step", ws), cut_err(digit1))),
            opt(preceded((ws, "with", ws), cut_err(identifier))),
        )
            .map(move |(_, system, _, _, configure, step, tool)| {
                Some(CtxItem {
                    system,
                    configure,
                    step: step.and_then(|s: &str| s.parse().ok()),
                    tool: tool.map(str::to_owned),
                    at,
                })
            }),
    ))
    .parse_next(input)
}

/// `contextualize [MAX_TIME] [( … )]`.
fn contextualize(input: &mut In<'_>) -> Res<Kind> {
    ws(input)?;
    let max_time = opt(digit1.try_map(|d: &str| d.parse::<u64>())).parse_next(input)?;
    ws(input)?;
    let items: Option<Vec<Option<CtxItem>>> = opt(delimited(
        ('(', ws),
        repeat(0.., (context_item, ws).map(|(item, _)| item)),
        cut_err(')')
            .context(StrContext::Expected(')'.into()))
            .context(expected("'option' or 'system … configure …'")),
    ))
    .parse_next(input)?;
    Ok(Kind::Contextualize {
        max_time,
        items: items.map(|items| items.into_iter().flatten().collect()),
    })
}

/// A block with a name and optional features.
fn named_features(input: &mut In<'_>) -> Res<(String, Option<Vec<Feature>>)> {
    let name = name(input)?;
    ws(input)?;
    let features = opt(features).parse_next(input)?;
    Ok((name, features))
}

/// One top-level sentence.
fn block(input: &mut In<'_>) -> Res<Block> {
    let at = input.current_token_start();
    let keyword = peek(identifier).parse_next(input)?;
    if !KEYWORDS.contains(&keyword) {
        return Err(ErrMode::Cut(ContextError::new()));
    }
    identifier.parse_next(input)?;
    let kind = match keyword {
        "description" => named_features
            .map(|(name, f)| Kind::Description {
                name,
                features: f.unwrap_or_default(),
            })
            .context(StrContext::Label("description"))
            .parse_next(input)?,
        "ansible" => named_features
            .map(|(name, _)| Kind::Ansible { name })
            .context(StrContext::Label("ansible"))
            .parse_next(input)?,
        "network" => named_features
            .map(|(name, features)| Kind::Network { name, features })
            .context(StrContext::Label("network"))
            .parse_next(input)?,
        "system" => named_features
            .map(|(name, features)| Kind::System { name, features })
            .context(StrContext::Label("system"))
            .parse_next(input)?,
        "include" => named_features
            .map(|(name, _)| Kind::Include { name })
            .context(StrContext::Label("include"))
            .parse_next(input)?,
        "configure" => configure
            .context(StrContext::Label("configure"))
            .parse_next(input)?,
        "deploy" => deploy
            .context(StrContext::Label("deploy"))
            .parse_next(input)?,
        "contextualize" => contextualize
            .context(StrContext::Label("contextualize"))
            .parse_next(input)?,
        _ => return Err(ErrMode::Cut(ContextError::new())),
    };
    Ok(Block { at, kind })
}

/// The whole document: sentences between comments, to the end.
fn document(input: &mut In<'_>) -> Res<Document> {
    ws(input)?;
    let blocks = repeat(0.., (block, ws).map(|(b, _)| b)).parse_next(input)?;
    eof.parse_next(input)?;
    Ok(Document { blocks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_with_comparisons_units_and_comments_parses() {
        let doc = parse(
            "# cluster\nsystem front (\n  cpu.count>=2 and # two\n  memory.size >= 3g and\n  disk.0.applications contains (name = 'x')\n)\ndeploy front 1\n",
        )
        .unwrap();
        assert_eq!(doc.blocks.len(), 2);
        let Kind::System { name, features } = &doc.blocks[0].kind else {
            panic!("not a system: {:?}", doc.blocks[0]);
        };
        assert_eq!(name, "front");
        let features = features.as_ref().unwrap();
        assert_eq!(features[0].op, Op::Ge);
        assert_eq!(
            features[1].value,
            Value::Number {
                value: 3.0,
                unit: Some("g".into())
            }
        );
        assert!(matches!(features[2].value, Value::Features(ref f) if f[0].name == "name"));
        assert!(matches!(
            doc.blocks[1].kind,
            Kind::Deploy { ref system, count: Count::Number(1), cloud: None } if system == "front"
        ));
    }

    #[test]
    fn a_recipe_is_kept_verbatim_with_its_hashes() {
        let doc = parse("configure c (\n@begin\n#!/bin/sh\necho '#1' )\n@end\n)").unwrap();
        let Kind::Configure {
            recipe: Some(recipe),
            ..
        } = &doc.blocks[0].kind
        else {
            panic!("no recipe");
        };
        assert_eq!(recipe.text, "\n#!/bin/sh\necho '#1' )\n");
    }

    #[test]
    fn contextualize_lists_its_steps() {
        let doc = parse(
            "contextualize 1200 (\n option ansible_version = '2.6'\n system a configure c step 1\n system b configure d with cloud_init\n)",
        )
        .unwrap();
        let Kind::Contextualize { max_time, items } = &doc.blocks[0].kind else {
            panic!("not contextualize");
        };
        assert_eq!(*max_time, Some(1200));
        let items = items.as_ref().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].step, Some(1));
        assert_eq!(items[1].tool.as_deref(), Some("cloud_init"));
    }

    #[test]
    fn a_deploy_is_not_followed_by_a_keyword_as_cloud() {
        let doc = parse("deploy a 2\nsystem a ()").unwrap();
        assert!(matches!(
            doc.blocks[0].kind,
            Kind::Deploy { cloud: None, .. }
        ));
        let doc = parse("deploy a 2 cloud1").unwrap();
        assert!(
            matches!(doc.blocks[0].kind, Kind::Deploy { ref cloud, .. } if cloud.as_deref() == Some("cloud1"))
        );
    }

    #[test]
    fn a_missing_and_is_reported_where_it_is() {
        let text = "system a (\n  cpu.count = 1\n  memory.size = 1g\n)";
        let error = parse(text).unwrap_err();
        assert_eq!(&text[error.offset..error.offset + 6], "memory");
        assert!(error.message.contains("'and'"), "{}", error.message);
    }

    #[test]
    fn an_unclosed_string_is_reported() {
        let error = parse("system a ( disk.0.os.name = 'linux )").unwrap_err();
        assert!(error.message.contains("closing quote"), "{}", error.message);
    }

    #[test]
    fn an_unknown_sentence_is_malformed() {
        let error = parse("system a ()\nmachine b ()").unwrap_err();
        assert_eq!(error.offset, 12);
    }
}
