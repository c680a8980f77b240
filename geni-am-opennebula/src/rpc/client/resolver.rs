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

#[cfg(test)]
mod tests {
    use super::*;
    use ureq::Agent;

    fn resolve(resolver: &RememberingResolver, url: &str) -> Vec<std::net::SocketAddr> {
        let config = Agent::config_builder().build();
        let uri: Uri = url.parse().unwrap();
        resolver
            .resolve(&uri, &config, NextTimeout::default())
            .unwrap()
            .to_vec()
    }

    #[test]
    fn another_host_or_port_is_looked_up_not_taken_from_memory() {
        let resolver = RememberingResolver::default();
        assert_eq!(
            resolve(&resolver, "http://127.0.0.1:2633/RPC2"),
            ["127.0.0.1:2633".parse().unwrap()]
        );
        assert_eq!(
            resolve(&resolver, "http://127.0.0.2:2633/RPC2"),
            ["127.0.0.2:2633".parse().unwrap()]
        );
        assert_eq!(
            resolve(&resolver, "http://127.0.0.2:2634/RPC2"),
            ["127.0.0.2:2634".parse().unwrap()]
        );
    }

    #[test]
    fn the_last_answer_is_remembered_for_its_host_and_port() {
        let resolver = RememberingResolver::default();
        resolve(&resolver, "http://127.0.0.1:2633/RPC2");
        let last = resolver.last.lock().unwrap();
        let known = last.as_ref().expect("an answer remembered");
        assert_eq!(known.authority, "127.0.0.1:2633");
        assert_eq!(known.addrs.to_vec(), ["127.0.0.1:2633".parse().unwrap()]);
    }
}
