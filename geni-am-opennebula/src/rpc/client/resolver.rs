//! Name resolution for the oned client: ureq's resolver, remembered for a
//! short while. With a timeout set, ureq resolves the endpoint on every
//! request — even one that goes out on a kept-alive connection — on a
//! thread of its own, which cost each oned call about 0.3 ms on loopback.
//! The endpoint's addresses are kept for [`KEEP_FOR`], so a pool of
//! kept-alive connections makes no lookup at all, and a renamed host is
//! still followed within seconds.

use std::sync::Mutex;
use std::time::{Duration, Instant};
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How long resolved addresses are used before the name is looked up again.
pub const KEEP_FOR: Duration = Duration::from_secs(10);

/// ureq's resolver with the last answer remembered per host and port.
#[derive(Debug, Default)]
pub struct RememberingResolver {
    inner: DefaultResolver,
    last: Mutex<Option<Remembered>>,
}

/// One remembered answer.
#[derive(Debug)]
struct Remembered {
    authority: String,
    at: Instant,
    addrs: ResolvedSocketAddrs,
}

impl Resolver for RememberingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
        let now = Instant::now();
        {
            let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(known) = last.as_ref()
                && known.authority == authority
                && now.duration_since(known.at) < KEEP_FOR
            {
                return Ok(known.addrs.clone());
            }
        }
        let addrs = self.inner.resolve(uri, config, timeout)?;
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(Remembered {
            authority: authority.to_owned(),
            at: now,
            addrs: addrs.clone(),
        });
        Ok(addrs)
    }
}
