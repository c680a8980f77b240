//! A reader of the VNET template an operator writes in
//! `[backend.opennebula.links] template`, in OpenNebula's `NAME = value`
//! syntax, so `geni-am backend check` finds a mistake before the first
//! link does.

/// Reads an operator-written VNET template in OpenNebula's `NAME = value`
/// syntax: single values (quoted or bare) and vectors `NAME = [ K = V, … ]`,
/// `#` comments; it must name `VN_MAD`.
pub(super) fn check_vnet_template(text: &str) -> Result<(), String> {
    let mut rest = text.trim_start();
    let mut names = Vec::new();
    while !rest.is_empty() {
        if let Some(comment) = rest.strip_prefix('#') {
            rest = comment
                .split_once('\n')
                .map_or("", |(_, after)| after)
                .trim_start();
            continue;
        }
        let (name, after) = attribute_name(rest)?;
        let after = after
            .trim_start()
            .strip_prefix('=')
            .ok_or_else(|| format!("`=` expected after {name}"))?;
        let after = after.trim_start();
        rest = match after.strip_prefix('[') {
            Some(vector) => {
                let (body, tail) = vector
                    .split_once(']')
                    .ok_or_else(|| format!("{name}: `]` missing"))?;
                for pair in body.split(',').filter(|p| !p.trim().is_empty()) {
                    let (key, value) = pair.split_once('=').ok_or_else(|| {
                        format!("{name}: `K = V` expected, found `{}`", pair.trim())
                    })?;
                    attribute_name(key.trim())?;
                    single_value(value.trim(), &name)?;
                }
                tail
            }
            None => single_value(after, &name)?,
        }
        .trim_start();
        names.push(name);
    }
    if names.iter().any(|n| n.eq_ignore_ascii_case("VN_MAD")) {
        Ok(())
    } else {
        Err("no VN_MAD (e.g. VN_MAD = \"bridge\")".into())
    }
}

/// An attribute name at the start of `text`, and what follows it.
fn attribute_name(text: &str) -> Result<(String, &str), String> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    if end == 0 {
        let found: String = text.chars().take(20).collect();
        return Err(format!("attribute name expected, found `{found}`"));
    }
    Ok((text[..end].to_ascii_uppercase(), &text[end..]))
}

/// A single value at the start of `text` (`"quoted"` or a bare word to the
/// end of the line), and what follows it.
fn single_value<'t>(text: &'t str, name: &str) -> Result<&'t str, String> {
    if let Some(quoted) = text.strip_prefix('"') {
        let end = quoted
            .find('"')
            .ok_or_else(|| format!("{name}: closing `\"` missing"))?;
        return Ok(&quoted[end + 1..]);
    }
    let end = text.find(['\n', ',']).unwrap_or(text.len());
    if text[..end].trim().is_empty() {
        return Err(format!("{name}: value missing"));
    }
    Ok(&text[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vnet_templates_are_read_before_use() {
        check_vnet_template("VN_MAD = \"bridge\"\nAR = [ TYPE = \"IP4\", IP = \"192.168.100.2\", SIZE = \"200\" ]\n").unwrap();
        check_vnet_template("# a comment\nvn_mad = bridge\nBRIDGE = br0\n").unwrap();
        assert!(
            check_vnet_template("VN_MAD = \"bridge\nAR = [ TYPE = IP4 ]")
                .unwrap_err()
                .contains("closing")
        );
        assert!(
            check_vnet_template("VN_MAD = bridge\nAR = [ TYPE = IP4")
                .unwrap_err()
                .contains("`]` missing")
        );
        assert!(
            check_vnet_template("BRIDGE = br0\n")
                .unwrap_err()
                .contains("VN_MAD")
        );
        assert!(
            check_vnet_template("= x")
                .unwrap_err()
                .contains("attribute name")
        );
    }
}
