#!/usr/bin/env python3
"""A small HTTP and SOCKS5 proxy for Tether's tests, on 127.0.0.1 only.

Prints "ports <http> <socks>" first, then one line per proxied request: "CONNECT host:port", "<METHOD> <absolute
URL>" (forwarded plain HTTP) or "SOCKS host:port". With --auth USER:PASSWORD the HTTP proxy answers 407 to requests
without that Proxy-Authorization (and logs "407"). Runs until stdin closes.
"""
import base64
import select
import socket
import socketserver
import struct
import sys
import threading

AUTH = None
LOCK = threading.Lock()


def log(line):
    with LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def pipe(a, b):
    sockets = [a, b]
    try:
        while True:
            readable, _, _ = select.select(sockets, [], [], 30)
            if not readable:
                return
            for s in readable:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1").split("\r\n"), rest


class HTTPProxy(socketserver.BaseRequestHandler):
    def handle(self):
        conn = self.request
        while True:
            lines, rest = read_head(conn)
            if not lines:
                return
            method, target, version = lines[0].split(" ", 2)
            headers = [l for l in lines[1:] if l]
            if AUTH is not None:
                expected = "Basic " + base64.b64encode(AUTH.encode()).decode()
                given = [h.split(":", 1)[1].strip() for h in headers if h.lower().startswith("proxy-authorization:")]
                if given != [expected]:
                    log("407")
                    conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                                 b"Proxy-Authenticate: Basic realm=\"proxy\"\r\nContent-Length: 0\r\n\r\n")
                    continue
            if method == "CONNECT":
                log("CONNECT " + target)
                host, port = target.rsplit(":", 1)
                upstream = socket.create_connection((host, int(port)))
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
                pipe(conn, upstream)
                return
            log(method + " " + target)
            url = target.split("://", 1)[1]
            hostport, path = (url.split("/", 1) + [""])[:2]
            host, port = (hostport.rsplit(":", 1) + ["80"])[:2] if ":" in hostport else (hostport, "80")
            upstream = socket.create_connection((host, int(port)))
            kept = [h for h in headers if not h.lower().startswith(("proxy-", "connection:"))]
            upstream.sendall(("%s /%s %s\r\n" % (method, path, version)).encode("latin-1")
                             + "".join(h + "\r\n" for h in kept + ["Connection: close"]).encode("latin-1")
                             + b"\r\n" + rest)
            response = b""
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    break
                response += chunk
            upstream.close()
            conn.sendall(response)
            return


class SOCKSProxy(socketserver.BaseRequestHandler):
    def handle(self):
        conn = self.request
        greeting = conn.recv(2)
        if len(greeting) < 2 or greeting[0] != 5:
            return
        conn.recv(greeting[1])
        conn.sendall(b"\x05\x00")
        request = conn.recv(4)
        if len(request) < 4 or request[1] != 1:
            return
        kind = request[3]
        if kind == 1:
            host = socket.inet_ntoa(conn.recv(4))
        elif kind == 3:
            host = conn.recv(conn.recv(1)[0]).decode()
        elif kind == 4:
            host = socket.inet_ntop(socket.AF_INET6, conn.recv(16))
        else:
            return
        port = struct.unpack(">H", conn.recv(2))[0]
        log("SOCKS %s:%d" % (host, port))
        upstream = socket.create_connection((host, port))
        conn.sendall(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack(">H", 0))
        pipe(conn, upstream)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--auth":
        AUTH = sys.argv[2]
    http = Server(("127.0.0.1", 0), HTTPProxy)
    socks = Server(("127.0.0.1", 0), SOCKSProxy)
    for server in (http, socks):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    log("ports %d %d" % (http.server_address[1], socks.server_address[1]))
    sys.stdin.read()
