#!/usr/bin/env python3
"""The raw HTTP loop lexrun's engine overhead is measured against.

    raw_http_loop.py record PORT UPSTREAM FILE
        A pass-through proxy on 127.0.0.1:PORT to the model server at UPSTREAM
        (http://HOST:PORT): every request lexrun sends through it (method, path, body) is
        written to FILE, one JSON object per line, numbered in the order it arrived, with
        how many bytes of the answer lexrun read (it stops reading an answer it cuts, as
        one that repeats itself); responses are streamed back as the server sends them.
        Stops on SIGINT or SIGTERM.

    raw_http_loop.py replay FILE UPSTREAM
        Sends the recorded requests to UPSTREAM one after another on one kept-alive
        connection each, reading each response to its end (a streamed answer included) or,
        where lexrun cut an answer, as far as lexrun read it, and prints nothing. This is the least any program asking the same server
        the same questions must do: what lexrun takes beyond it is its overhead.

Only the standard library is used, so the loop itself adds as little as Python can.
"""

import http.client
import http.server
import json
import signal
import sys
import threading
import urllib.parse

HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
       "proxy-connection", "host", "content-length", "accept-encoding"}


def connect(upstream):
    u = urllib.parse.urlsplit(upstream)
    return http.client.HTTPConnection(u.hostname, u.port or 80, timeout=900)


def record(port, upstream, path):
    lock = threading.Lock()
    out = open(path, "w", encoding="utf-8")
    arrived = [0]

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            with lock:
                seq = arrived[0]
                arrived[0] += 1
            sent, cut = 0, False
            try:
                sent = self.relay(body, headers)
            except (BrokenPipeError, ConnectionResetError) as e:
                sent, cut = e.args[-1] if isinstance(e.args[-1], int) else 0, True
                self.close_connection = True
            with lock:
                out.write(json.dumps({"seq": seq, "method": self.command, "path": self.path,
                                      "headers": headers, "body": body.decode("utf-8"),
                                      "read": sent, "cut": cut}) + "\n")
                out.flush()

        def relay(self, body, headers):
            """Streams the server's answer on; the body bytes lexrun took."""
            up = connect(upstream)
            up.request(self.command, self.path, body=body or None, headers=headers)
            r = up.getresponse()
            self.send_response(r.status)
            for k, v in r.getheaders():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            sent = 0
            try:
                while True:
                    chunk = r.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                    sent += len(chunk)
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError) as e:
                raise type(e)(sent) from None
            finally:
                up.close()
            return sent

        do_GET = forward
        do_POST = forward

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Proxy)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    out.close()


def replay(path, upstream):
    with open(path, encoding="utf-8") as f:
        calls = sorted((json.loads(line) for line in f if line.strip()), key=lambda c: c["seq"])
    for c in calls:
        conn = connect(upstream)
        body = c["body"].encode("utf-8") if c["body"] else None
        conn.request(c["method"], c["path"], body=body, headers=c["headers"])
        r = conn.getresponse()
        if r.status >= 500:
            sys.exit(f"{c['method']} {c['path']}: the server answered {r.status}")
        got = 0
        while not (c["cut"] and got >= c["read"]):
            chunk = r.read1(65536)
            if not chunk:
                break
            got += len(chunk)
        conn.close()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "record":
        record(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "replay":
        replay(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
