//! Expiry rules (GENI AM API v3, "Renew" and "Sliver Expiration"): no
//! sliver outlives the credential
//! that authorised the call or the policy's maximum lease; allocations
//! last the short allocation timeout; Renew may shorten, fails past the
//! limits unless `geni_extend_alap` asks to clamp.

use super::{CoreError, Policy};
use chrono::{DateTime, Utc};

/// Expiry of a new allocation: the allocation timeout, capped by the
/// credential.
pub(super) fn allocation(
    now: DateTime<Utc>,
    policy: &Policy,
    credential_expires: DateTime<Utc>,
) -> Result<DateTime<Utc>, CoreError> {
    usable_credential(now, credential_expires)?;
    Ok((now + policy.allocation_timeout).min(credential_expires))
}

/// Expiry of a sliver being provisioned: the requested end time (ignored
/// when not in the future) or the default lease, capped by the policy's
/// maximum lease and the credential.
pub(super) fn provision(
    now: DateTime<Utc>,
    policy: &Policy,
    credential_expires: DateTime<Utc>,
    end_time: Option<DateTime<Utc>>,
) -> Result<DateTime<Utc>, CoreError> {
    usable_credential(now, credential_expires)?;
    let wanted = end_time
        .filter(|t| *t > now)
        .unwrap_or(now + policy.default_lease);
    Ok(wanted.min(now + policy.max_lease).min(credential_expires))
}

/// The expiry a Renew to `requested` gives: `requested` itself when
/// allowed, the latest allowed time with `extend_alap`, else a refusal
/// naming the limit.
pub(super) fn renew(
    now: DateTime<Utc>,
    policy: &Policy,
    credential_expires: DateTime<Utc>,
    requested: DateTime<Utc>,
    extend_alap: bool,
) -> Result<DateTime<Utc>, CoreError> {
    if requested <= now {
        return Err(CoreError::ExpiryPassed { requested, now });
    }
    let policy_max = now + policy.max_lease;
    let (limit, why) = if credential_expires <= policy_max {
        (credential_expires, "the credential (slice) expires")
    } else {
        (policy_max, "the aggregate's maximum lease ends")
    };
    if requested <= limit {
        return Ok(requested);
    }
    if extend_alap && limit > now {
        return Ok(limit);
    }
    Err(CoreError::ExpiryTooLate {
        requested,
        limit,
        why,
    })
}

/// Fails when the credential has already expired.
fn usable_credential(
    now: DateTime<Utc>,
    credential_expires: DateTime<Utc>,
) -> Result<(), CoreError> {
    if credential_expires <= now {
        return Err(CoreError::CredentialExpired {
            at: credential_expires,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeDelta, TimeZone};

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
    }

    fn days(n: i64) -> TimeDelta {
        TimeDelta::days(n)
    }

    #[test]
    fn allocation_is_short_and_capped_by_the_credential() {
        let p = Policy::default();
        assert_eq!(
            allocation(now(), &p, now() + days(1)).unwrap(),
            now() + TimeDelta::minutes(10)
        );
        let soon = now() + TimeDelta::minutes(3);
        assert_eq!(allocation(now(), &p, soon).unwrap(), soon);
        assert!(matches!(
            allocation(now(), &p, now()).unwrap_err(),
            CoreError::CredentialExpired { .. }
        ));
    }

    #[test]
    fn provision_uses_end_time_default_lease_and_caps() {
        let p = Policy::default();
        let cred = now() + days(60);
        assert_eq!(provision(now(), &p, cred, None).unwrap(), now() + days(7));
        assert_eq!(
            provision(now(), &p, cred, Some(now() + days(2))).unwrap(),
            now() + days(2)
        );
        assert_eq!(
            provision(now(), &p, cred, Some(now() + days(90))).unwrap(),
            now() + days(30),
            "policy max"
        );
        assert_eq!(
            provision(now(), &p, now() + days(3), None).unwrap(),
            now() + days(3),
            "credential"
        );
        assert_eq!(
            provision(now(), &p, cred, Some(now() - days(1))).unwrap(),
            now() + days(7),
            "a past end time is ignored"
        );
    }

    #[test]
    fn renew_allows_five_days_and_shortening() {
        let p = Policy::default();
        let cred = now() + days(10);
        for wanted in [
            now() + TimeDelta::minutes(5),
            now() + days(2),
            now() + days(5),
        ] {
            assert_eq!(renew(now(), &p, cred, wanted, false).unwrap(), wanted);
        }
    }

    #[test]
    fn renew_refuses_past_the_credential_the_policy_and_now() {
        let p = Policy::default();
        let cred = now() + days(10);
        let err = renew(now(), &p, cred, now() + days(12), false).unwrap_err();
        assert!(matches!(err, CoreError::ExpiryTooLate { .. }), "{err}");
        assert!(err.to_string().contains("credential"), "{err}");
        let err = renew(now(), &p, now() + days(90), now() + days(40), false).unwrap_err();
        assert!(err.to_string().contains("maximum lease"), "{err}");
        let err = renew(now(), &p, cred, now() - days(1), false).unwrap_err();
        assert!(matches!(err, CoreError::ExpiryPassed { .. }), "{err}");
        assert!(err.to_string().contains("not in the future"), "{err}");
    }

    #[test]
    fn extend_alap_clamps_to_the_limit() {
        let p = Policy::default();
        let cred = now() + days(10);
        assert_eq!(
            renew(now(), &p, cred, now() + days(12), true).unwrap(),
            cred
        );
        assert_eq!(
            renew(now(), &p, now() + days(90), now() + days(40), true).unwrap(),
            now() + days(30)
        );
    }
}
