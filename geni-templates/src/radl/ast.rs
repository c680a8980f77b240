//! The RADL document tree both forms (text and JSON) parse into: the
//! sentences in document order, each with the byte offset it starts at.

/// A parsed RADL document.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Document {
    /// The sentences, in order.
    pub blocks: Vec<Block>,
}

/// One sentence and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Block {
    /// Byte offset in the document.
    pub at: usize,
    /// What it says.
    pub kind: Kind,
}

/// The RADL sentences.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    /// `description NAME (…)`: metadata.
    Description {
        name: String,
        features: Vec<Feature>,
    },
    /// `ansible NAME (…)`: an external Ansible master.
    Ansible { name: String },
    /// `network NAME [(…)]`.
    Network {
        name: String,
        features: Option<Vec<Feature>>,
    },
    /// `system NAME [(…)]`.
    System {
        name: String,
        features: Option<Vec<Feature>>,
    },
    /// `include NAME (…)`: EC3's template inclusion.
    Include { name: String },
    /// `configure NAME [(@begin … @end)]`.
    Configure {
        name: String,
        recipe: Option<Recipe>,
    },
    /// `deploy SYSTEM COUNT [CLOUD]`.
    Deploy {
        system: String,
        count: Count,
        cloud: Option<String>,
    },
    /// `contextualize [MAX_TIME] [(…)]`; `items` is `None` without
    /// parentheses, empty for `contextualize ()` (no contextualization).
    Contextualize {
        max_time: Option<u64>,
        items: Option<Vec<CtxItem>>,
    },
}

/// A configure block's recipe text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Recipe {
    /// The text between `@begin` and `@end`.
    pub text: String,
    /// Byte offset of the text.
    pub at: usize,
}

/// How many VMs a `deploy` asks for.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Count {
    /// A number.
    Number(u64),
    /// `@input.NAME@`.
    Input(String),
}

/// `system S configure C [step N] [with TOOL]`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CtxItem {
    pub system: String,
    pub configure: String,
    pub step: Option<u64>,
    pub tool: Option<String>,
    pub at: usize,
}

/// `name op value`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Feature {
    pub name: String,
    pub op: Op,
    pub value: Value,
    /// Byte offset of the name.
    pub at: usize,
}

/// A feature's comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Eq,
    Ge,
    Le,
    Gt,
    Lt,
    Contains,
}

impl Op {
    /// The operator as RADL writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ge => ">=",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Lt => "<",
            Op::Contains => "contains",
        }
    }
}

/// A feature's value.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// A string (quoted, or a bare word).
    Str(String),
    /// A number with an optional unit (`1024m`, `100GB`).
    Number { value: f64, unit: Option<String> },
    /// `@input.NAME@`.
    Input(String),
    /// `( features )` after `contains`.
    Features(Vec<Feature>),
}
