"""geni-lib (PyPI ``geni-lib``) against a running geni-am: the AM API v3
lifecycle through ``geni.minigcf.amapi3`` and the v2 one through
``geni.minigcf.amapi2``, with requests built by ``geni.rspec.pg.Request``.

geni-lib verifies the aggregate's server certificate against the bundle
it is given (the development CA), host name included. The aggregate and
its files are named by environment variables (set by the Rust test
``tests/tests/genilib.rs``, which starts the binary):

  GENI_AM_URL           https://127.0.0.1:PORT (endpoints /am/3 and /am/2)
  GENI_AM_DIR           the directory ``geni-am dev init`` wrote
  GENI_AM_SLICE_URN     the slice of the slice credential

Run: ``python -m pytest -v tests/python/test_genilib.py``.
"""

import datetime
import os
import time

import pytest

from geni.minigcf import amapi2, amapi3
import geni.rspec.pg as pg

pytestmark = pytest.mark.skipif(
    "GENI_AM_URL" not in os.environ, reason="GENI_AM_URL names no running aggregate"
)

SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDy3uYb4Lw3Bk0ZJdGq4VnW4vGmC0cX9r3HbJ3Zk8vAe alice@genilib"
ALICE = "urn:publicid:IDN+geni-am.test+user+alice"


class Credential(object):
    """What geni.minigcf's v3 calls read a credential from."""

    def __init__(self, path):
        self.path = path
        self.type = "geni_sfa"
        self.version = "3"


@pytest.fixture(scope="module")
def am():
    base = os.environ["GENI_AM_URL"]
    d = os.environ["GENI_AM_DIR"]
    return {
        "v3": base + "/am/3",
        "v2": base + "/am/2",
        "tls": (os.path.join(d, "ca-cert.pem"), os.path.join(d, "alice-cert.pem"),
                os.path.join(d, "alice-key.pem")),
        "slice_cred": os.path.join(d, "demo-slice-cred.xml"),
        "user_cred": os.path.join(d, "alice-user-cred.xml"),
        "slice": os.environ["GENI_AM_SLICE_URN"],
    }


def request(prefix):
    """Two nodes (a raw PC and a Xen VM) on a LAN."""
    r = pg.Request()
    pc = pg.RawPC(prefix + "-pc")
    vm = pg.XenVM(prefix + "-vm")
    lan = pg.LAN(prefix + "-lan")
    for node in (pc, vm):
        lan.addInterface(node.addInterface(node.name + "-if0"))
        r.addResource(node)
    r.addResource(lan)
    return r.toXMLString(pretty_print=True, ucode=True)


def ok(reply):
    assert reply["code"]["geni_code"] == 0, reply.get("output")
    return reply["value"]


def states(slivers, key):
    return sorted(set(s[key] for s in slivers))


def test_v3_lifecycle(am):
    root, cert, key = am["tls"]
    creds = [Credential(am["slice_cred"])]
    # amapi3.getversion passes its options to xmlrpclib.dumps as the
    # parameter tuple, so the options struct must come wrapped in one.
    version = amapi3.getversion(am["v3"], root, cert, key, ({},))
    assert version["geni_api"] == 3
    assert ok(version)["geni_api_versions"]["3"] == am["v3"]

    allocated = ok(amapi3.allocate(am["v3"], root, cert, key, creds, am["slice"],
                                   request("v3")))
    assert states(allocated["geni_slivers"], "geni_allocation_status") == ["geni_allocated"]
    assert 'client_id="v3-pc"' in allocated["geni_rspec"]
    assert 'client_id="v3-vm"' in allocated["geni_rspec"]

    users = [{"urn": ALICE, "keys": [SSH_KEY]}]
    provisioned = ok(amapi3.provision(am["v3"], root, cert, key, creds, [am["slice"]],
                                      {"geni_rspec_version": {"type": "GENI", "version": "3"},
                                       "geni_users": users}))
    assert states(provisioned["geni_slivers"], "geni_allocation_status") == ["geni_provisioned"]
    assert SSH_KEY in provisioned["geni_rspec"]

    started = ok(amapi3.poa(am["v3"], root, cert, key, creds, [am["slice"]], "geni_start"))
    assert len(started) == len(allocated["geni_slivers"])

    deleted = ok(amapi3.delete(am["v3"], root, cert, key, creds, [am["slice"]]))
    assert states(deleted, "geni_allocation_status") == ["geni_unallocated"]
    wait_until_every_host_is_available(am)


TOSCA_TEMPLATE = """tosca_definitions_version: tosca_simple_yaml_1_0
description: One small VM, as a TOSCA Simple Profile service template.
topology_template:
  node_templates:
    tosca-vm:
      type: tosca.nodes.Compute
      capabilities:
        host:
          properties:
            num_cpus: 1
            mem_size: 512 MB
"""


def test_v3_tosca_template(am):
    """A TOSCA template in Allocate's rspec argument; GetVersion lists TOSCA."""
    root, cert, key = am["tls"]
    creds = [Credential(am["slice_cred"])]
    version = ok(amapi3.getversion(am["v3"], root, cert, key, ({},)))
    kinds = [(v["type"], v["version"]) for v in version["geni_request_rspec_versions"]]
    assert ("GENI", "3") in kinds and ("TOSCA", "1.0") in kinds
    allocated = ok(amapi3.allocate(am["v3"], root, cert, key, creds, am["slice"],
                                   TOSCA_TEMPLATE))
    assert 'client_id="tosca-vm"' in allocated["geni_rspec"]
    assert 'ram="512"' in allocated["geni_rspec"]
    deleted = ok(amapi3.delete(am["v3"], root, cert, key, creds, [am["slice"]]))
    assert states(deleted, "geni_allocation_status") == ["geni_unallocated"]
    wait_until_every_host_is_available(am)


def wait_until_every_host_is_available(am):
    """A Delete keeps its hosts' capacity until their VMs are destroyed, a
    moment later; the advertisement says when every host is free again."""
    root, cert, key = am["tls"]
    user_cred = open(am["user_cred"]).read()
    deadline = time.time() + 30
    while True:
        ad = ok(amapi2.listresources(am["v2"], root, cert, key, [user_cred]))
        hosts = ad.count("<node ")
        free = ad.count('<available now="true"')
        if (hosts and free == hosts) or time.time() > deadline:
            break
        time.sleep(0.2)
    assert hosts and free == hosts, "%d of %d hosts available after Delete" % (free, hosts)


def test_v2_lifecycle(am):
    root, cert, key = am["tls"]
    slice_cred = open(am["slice_cred"]).read()
    user_cred = open(am["user_cred"]).read()
    version = amapi2.getversion(am["v2"], root, cert, key)
    assert version["geni_api"] == 2

    ad = ok(amapi2.listresources(am["v2"], root, cert, key, [user_cred]))
    assert 'type="advertisement"' in ad

    users = [{"urn": ALICE, "keys": [SSH_KEY]}]
    manifest = ok(amapi2.createsliver(am["v2"], root, cert, key, [slice_cred], am["slice"],
                                      request("v2"), users))
    assert 'type="manifest"' in manifest and 'client_id="v2-vm"' in manifest

    deadline = time.time() + 60
    while True:
        status = ok(amapi2.sliverstatus(am["v2"], root, cert, key, [slice_cred], am["slice"]))
        assert status["geni_urn"] == am["slice"]
        assert status["geni_resources"], status
        if status["geni_status"] in ("configuring", "ready") or time.time() > deadline:
            break
        time.sleep(0.2)
    assert status["geni_status"] in ("configuring", "ready"), status

    in_two_days = datetime.datetime.utcnow() + datetime.timedelta(days=2)
    assert ok(amapi2.renewsliver(am["v2"], root, cert, key, [slice_cred], am["slice"],
                                 in_two_days)) is True
    assert ok(amapi2.deletesliver(am["v2"], root, cert, key, [slice_cred], am["slice"])) is True
