//! The OpenNebula release a simulator plays, and the protocol and document
//! differences between releases that it reproduces.

/// An OpenNebula release as `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// Major release.
    pub major: u32,
    /// Minor release.
    pub minor: u32,
    /// Patch level.
    pub patch: u32,
}

impl Version {
    /// The release the recorded traffic comes from.
    pub const RECORDED: Version = Version {
        major: 7,
        minor: 4,
        patch: 0,
    };

    /// Parses `7.4.0`, `6.10`, `5.12.x` (a missing or `x` patch counts as 0).
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
        let patch = match parts.next() {
            None | Some("x") => 0,
            Some(p) => p.parse().ok()?,
        };
        if parts.next().is_some() || major < 4 {
            return None;
        }
        Some(Version {
            major,
            minor,
            patch,
        })
    }

    fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    /// Failure arrays carry the 5th `<i8>` element (5.10+).
    pub fn five_element_failures(self) -> bool {
        self.at_least(5, 10)
    }

    /// The 4.x action aliases (`shutdown`, `shutdown-hard`, `delete`) are accepted (5.x only).
    pub fn has_action_aliases(self) -> bool {
        !self.at_least(6, 0)
    }

    /// `one.vmpool.infoextended` exists (5.10+).
    pub fn has_infoextended(self) -> bool {
        self.at_least(5, 10)
    }

    /// `one.vmpool.infoset` exists (6.0+).
    pub fn has_infoset(self) -> bool {
        self.at_least(6, 0)
    }

    /// `one.vm.updateconf` takes the optional type argument (6.2+).
    pub fn updateconf_has_type(self) -> bool {
        self.at_least(6, 2)
    }

    /// `one.vmpool.info` returns reduced VM bodies (5.8+).
    pub fn reduced_vm_pool(self) -> bool {
        self.at_least(5, 8)
    }

    /// HOST documents use the 5.12 monitoring layout (no FREE_*/USED_* in HOST_SHARE).
    pub fn new_monitoring(self) -> bool {
        self.at_least(5, 12)
    }

    /// VNET documents have STATE/PREV_STATE (6.4+).
    pub fn vnet_has_state(self) -> bool {
        self.at_least(6, 4)
    }

    /// `one.template.instantiate` accepts exactly 4 parameters (7.2+).
    pub fn instantiate_takes_four(self) -> bool {
        self.at_least(7, 2)
    }

    /// Wrong-state refusals use the 7.x text ("This action is not available for state …").
    pub fn new_wrong_state_text(self) -> bool {
        self.at_least(7, 0)
    }

    /// VM documents carry the 6.x+ elements (SCHED_ACTIONS, BACKUPS, OS/UUID …).
    pub fn vm_has_backups(self) -> bool {
        self.at_least(6, 0)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_release_names() {
        assert_eq!(
            Version::parse("5.12.x"),
            Some(Version {
                major: 5,
                minor: 12,
                patch: 0
            })
        );
        assert_eq!(
            Version::parse("6.10.0").map(|v| v.to_string()),
            Some("6.10.0".into())
        );
        assert_eq!(
            Version::parse("7"),
            Some(Version {
                major: 7,
                minor: 0,
                patch: 0
            })
        );
        assert_eq!(Version::parse("seven"), None);
        assert!(!Version::parse("5.8").expect("5.8").five_element_failures());
        assert!(
            Version::parse("5.10")
                .expect("5.10")
                .five_element_failures()
        );
    }
}
