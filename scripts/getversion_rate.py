"""N clients, each opening a new TLS connection per GetVersion call, for S seconds; prints calls/s.

Usage: getversion_rate.py HOST PORT DIR CLIENTS SECONDS [resume] [/PATH]
DIR holds ca-cert.pem, alice-cert.pem and alice-key.pem (as `geni-am dev init`
writes them); resume offers each connection's session to the next; /PATH is
where GetVersion is posted (default /am/3; gcf-am.py answers at /).
"""
import multiprocessing, socket, ssl, sys, time

EXTRA = sys.argv[6:]
if len(sys.argv) < 6 or any(a != "resume" and not a.startswith("/") for a in EXTRA):
    sys.exit(__doc__)
HOST, PORT, DIR, CLIENTS, SECONDS = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
RESUME = "resume" in EXTRA
PATH = next((a for a in EXTRA if a.startswith("/")), "/am/3").encode()
BODY = b'<?xml version="1.0"?><methodCall><methodName>GetVersion</methodName><params/></methodCall>'
REQ = (b"POST " + PATH + b" HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/xml\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(BODY)) + BODY

def client(q):
    ctx = ssl.create_default_context(cafile=DIR + "/ca-cert.pem")
    ctx.load_cert_chain(DIR + "/alice-cert.pem", DIR + "/alice-key.pem")
    session, n, reused = None, 0, 0
    end = time.monotonic() + SECONDS
    errors = 0
    while time.monotonic() < end:
      try:
        with socket.create_connection((HOST, PORT)) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost", session=session if RESUME else None) as tls:
                tls.sendall(REQ)
                data = b""
                while True:
                    chunk = tls.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                assert b"200 OK" in data[:40], data[:200]
                reused += tls.session_reused
                session = tls.session
                try:
                    tls.unwrap()
                except (ssl.SSLError, OSError):
                    pass
        n += 1
      except ssl.SSLError as e:
        errors += 1
        session = None
        last = str(e)
    q.put((n, reused, errors))

if __name__ == "__main__":
    q = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=client, args=(q,)) for _ in range(CLIENTS)]
    for p in procs: p.start()
    results = [q.get() for _ in procs]
    for p in procs: p.join()
    total = sum(r[0] for r in results)
    print(f"{total / SECONDS:.0f} calls/s ({total} in {SECONDS:.0f} s, {CLIENTS} clients, resumed {sum(r[1] for r in results)}, handshake errors {sum(r[2] for r in results)})")
