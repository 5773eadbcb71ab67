// The Python test server (standard library only), written to a temporary file at test time.
let pythonServerScript = #"""
    import base64, gzip, hashlib, json, os, socket, ssl, struct, sys, threading, time, zlib
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import urlparse, parse_qs

    COUNTS = {}
    LOCK = threading.Lock()
    NONCE = "dcd98b7102dd2f0e8b11d0f600bfb0c093"

    def bump(key):
        with LOCK:
            COUNTS[key] = COUNTS.get(key, 0) + 1

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def send(self, status, body=b"", headers=None, content_type="text/plain"):
            if isinstance(body, str):
                body = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            for k, v in (headers or []):
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def read_body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = bytearray()
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    data += self.rfile.read(size)
                    self.rfile.readline()
                return bytes(data)
            length = int(self.headers.get("Content-Length", "0") or "0")
            return self.rfile.read(length) if length else b""

        def do_HEAD(self):
            self.do_GET()

        def do_POST(self):
            self.do_GET()

        def do_PUT(self):
            self.do_GET()

        def do_DELETE(self):
            self.do_GET()

        def do_GET(self):
            url = urlparse(self.path)
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            parts = [p for p in url.path.split("/") if p]
            route = parts[0] if parts else ""
            body = self.read_body() if self.command in ("POST", "PUT") else b""
            bump("path:" + url.path)
            if route == "hello":
                self.send(200, "hello")
            elif route == "status":
                self.send(int(parts[1]), "status %s" % parts[1])
            elif route == "echo":
                info = {"method": self.command, "path": self.path, "headers": {k: v for k, v in self.headers.items()},
                        "bodyLength": len(body), "sha256": hashlib.sha256(body).hexdigest()}
                self.send(200, json.dumps(info), content_type="application/json")
            elif route == "redirect":
                n = int(parts[1])
                code = int(q.get("code", "302"))
                target = "/redirect/%d?code=%d" % (n - 1, code) if n > 1 else q.get("final", "/echo")
                self.send(code, "redirecting", [("Location", target)])
            elif route == "loop":
                self.send(302, "loop", [("Location", "/loop")])
            elif route == "to":
                self.send(int(q.get("code", "302")), "to", [("Location", q["url"])])
            elif route == "basic":
                expected = "Basic " + base64.b64encode(("%s:%s" % (q.get("user", "u"), q.get("pass", "p"))).encode()).decode()
                if self.headers.get("Authorization") == expected:
                    self.send(200, "authorized")
                else:
                    self.send(401, "denied", [("WWW-Authenticate", 'Basic realm="%s"' % q.get("realm", "tether"))])
            elif route == "proxyauth":
                expected = "Basic " + base64.b64encode(b"pu:pp").decode()
                if self.headers.get("Proxy-Authorization") == expected:
                    self.send(200, "proxy ok")
                else:
                    self.send(407, "proxy denied", [("Proxy-Authenticate", 'Basic realm="proxy"')])
            elif route == "digest":
                self.digest(q)
            elif route == "chunked":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i in range(int(q.get("n", "5"))):
                    chunk = ("chunk-%d;" % i).encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            elif route in ("gzip", "deflate", "badgzip", "gzipbomb", "gziptext"):
                raw = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(2000)).encode()
                if route == "gziptext":
                    # Ordinary repetitive text: 3 KiB of it compresses more than 25 times.
                    raw = (b"compressed hello " * 200)[:3072]
                    data, enc = gzip.compress(raw), "gzip"
                elif route == "gzipbomb":
                    data, enc = gzip.compress(b"z" * 1000000), "gzip"
                elif route == "gzip":
                    data, enc = gzip.compress(raw), "gzip"
                elif route == "deflate":
                    data, enc = zlib.compress(raw), "deflate"
                else:
                    data, enc = b"this is not gzip at all" * 10, "gzip"
                self.send(200, data, [("Content-Encoding", enc), ("X-Raw-Length", str(len(raw))),
                                      ("X-Compressed-Length", str(len(data))),
                                      ("X-Raw-SHA256", hashlib.sha256(raw).hexdigest())])
            elif route == "slow":
                n, delay = int(q.get("n", "5")), float(q.get("delay", "0.2"))
                self.send_response(200)
                self.send_header("Content-Length", str(n))
                self.end_headers()
                for _ in range(n):
                    time.sleep(delay)
                    self.wfile.write(b"x")
                    self.wfile.flush()
            elif route == "stall":
                self.send_response(200)
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.write(b"partial")
                self.wfile.flush()
                time.sleep(float(q.get("for", "20")))
            elif route == "stallhead":
                time.sleep(float(q.get("for", "20")))
            elif route == "big":
                size = int(q["size"])
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                block = b"0123456789abcdef" * 4096
                sent = 0
                while sent < size:
                    piece = block[: min(len(block), size - sent)]
                    self.wfile.write(piece)
                    sent += len(piece)
            elif route in ("badchunksize", "longchunk"):
                # Lying chunked framing: a size that is not hexadecimal, or a chunk longer than its size.
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                if route == "badchunksize":
                    self.wfile.write(b"zz\r\nhello\r\n0\r\n\r\n")
                else:
                    self.wfile.write(b"2\r\nhello, this is longer than two bytes\r\n0\r\n\r\n")
                self.wfile.flush()
                self.close_connection = True
            elif route == "hugeheader":
                # One header of 1 MiB.
                self.send_response(200)
                self.send_header("X-Huge", "h" * (1 << 20))
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
                self.wfile.flush()
                self.close_connection = True
            elif route == "closenow":
                # Reads the request, then closes without answering: every send of it fails before any byte.
                self.close_connection = True
            elif route == "closeafter":
                # A keep-alive response (no Connection: close), then the server closes the connection anyway, as a
                # server whose idle timeout is shorter than the client's does.
                self.send(200, "closed after %s" % parts[1] if len(parts) > 1 else "closed after")
                self.close_connection = True
            elif route == "http10":
                # An HTTP/1.0 server's answer, written by hand (this server speaks HTTP/1.1).
                self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nCache-Control: max-age=60\r\n\r\nok")
                self.wfile.flush()
                self.close_connection = True
            elif route == "short":
                # A body cut off by a clean close (FIN) before its Content-Length is reached.
                self.send_response(200)
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.write(b"only ten b")
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_WR)
                self.close_connection = True
            elif route == "reset":
                self.send_response(200)
                self.send_header("Content-Length", "100000")
                self.end_headers()
                self.wfile.write(b"y" * 1000)
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
            elif route == "cache":
                name = parts[1]
                etag = q.get("etag")
                if etag and self.headers.get("If-None-Match") == etag:
                    bump("304:" + name)
                    headers = [("ETag", etag)]
                    if "cc" in q:
                        headers.append(("Cache-Control", q["cc"]))
                    self.send_response(304)
                    for k, v in headers:
                        self.send_header(k, v)
                    self.end_headers()
                    return
                bump("200:" + name)
                headers = []
                if "cc" in q:
                    headers.append(("Cache-Control", q["cc"]))
                if etag:
                    headers.append(("ETag", etag))
                if "vary" in q:
                    headers.append(("Vary", q["vary"]))
                if "expires" in q:
                    headers.append(("Expires", q["expires"]))
                with LOCK:
                    n = COUNTS.get("200:" + name, 0)
                self.send(200, "body %s #%d" % (name, n), headers)
            elif route == "count":
                with LOCK:
                    self.send(200, json.dumps(COUNTS), content_type="application/json")
            elif route == "setcookie":
                cookie = ("Set-Cookie", "%s=%s; Path=/" % (q.get("name", "session"), q.get("value", "abc")))
                if "then" in q:
                    self.send(302, "set, redirecting", [cookie, ("Location", q["then"])])
                else:
                    self.send(200, "set", [cookie])
            else:
                self.send(404, "not found")

        def digest(self, q):
            user, password, alg = q.get("user", "u"), q.get("pass", "p"), q.get("alg", "MD5")
            realm = "tether-digest"
            h = (lambda s: hashlib.sha256(s.encode()).hexdigest()) if alg == "SHA-256" else (lambda s: hashlib.md5(s.encode()).hexdigest())
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Digest "):
                fields = {}
                for part in auth[7:].split(","):
                    if "=" in part:
                        k, v = part.strip().split("=", 1)
                        fields[k] = v.strip('"')
                ha1 = h("%s:%s:%s" % (user, realm, password))
                ha2 = h("%s:%s" % (self.command, fields.get("uri", "")))
                expected = h("%s:%s:%s:%s:%s:%s" % (ha1, NONCE, fields.get("nc", ""), fields.get("cnonce", ""), "auth", ha2))
                if fields.get("response") == expected and fields.get("username") == user and fields.get("uri") == self.path:
                    self.send(200, "digest ok")
                    return
            challenge = 'Digest realm="%s", qop="auth", algorithm=%s, nonce="%s", opaque="5ccc069c403ebaf9f0171e9517f40e41"' % (realm, alg, NONCE)
            self.send(401, "denied", [("WWW-Authenticate", challenge)])

    def watch_stdin():
        try:
            sys.stdin.read()
        finally:
            os._exit(0)

    class Server(ThreadingHTTPServer):
        # The default listen backlog (5) overflows when the parallel tests open connections at once: the kernel then
        # drops SYNs, and the client's retransmission a second later outlasts the tests' half-second timeouts.
        request_queue_size = 512
        daemon_threads = True

    if __name__ == "__main__":
        server = Server(("127.0.0.1", 0), Handler)
        server.handle_error = lambda request, address: None
        if len(sys.argv) == 3:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1], sys.argv[2])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=watch_stdin, daemon=True).start()
        print(server.server_address[1], flush=True)
        server.serve_forever()
    """#
