#!/usr/bin/env python3
"""A TLS peer on Python's ssl module for TetherSockets' tests: a server or a client, optionally STARTTLS.

Server: prints "PORT <n>" first, serves --accept connections (in threads), then exits.
Client: connects to --port on 127.0.0.1.
After the handshake each side prints "SECURE <version> <alpn or -> <cipher>", then runs --mode:
  echo          echo every byte until the peer closes (server), or send --message and print "GOT <reply>" (client)
  sink          read an 8-byte big-endian length, then that many bytes; reply "<count> <sha256 hex>\\n"
  source:<n>    send n bytes of the pattern i % 251, then wait for the peer to close
With --starttls the first line ("STARTTLS\\n") is exchanged in plaintext: a client sends it, a server reads it,
and both upgrade right after it (a client sends the line and its ClientHello back to back).
Errors print "ERROR <text>" and exit 1 (client) or end that connection (server).
"""
import argparse
import hashlib
import socket
import ssl
import struct
import sys
import threading

parser = argparse.ArgumentParser()
parser.add_argument("role", choices=["server", "client"])
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--cert")
parser.add_argument("--key")
parser.add_argument("--ca")
parser.add_argument("--require-client-cert", action="store_true")
parser.add_argument("--tls12-only", action="store_true")
parser.add_argument("--alpn")
parser.add_argument("--server-name")
parser.add_argument("--starttls", action="store_true")
parser.add_argument("--greeting", help="server with --starttls: a plaintext line sent before reading the client's")
parser.add_argument("--mode", default="echo")
parser.add_argument("--message", default="hello over tls\n")
parser.add_argument("--accept", type=int, default=1)
args = parser.parse_args()

lock = threading.Lock()


def say(text):
    with lock:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def context(server):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
    if args.cert:
        ctx.load_cert_chain(args.cert, args.key)
    if args.ca:
        ctx.load_verify_locations(args.ca)
    if server:
        if args.require_client_cert:
            ctx.verify_mode = ssl.CERT_REQUIRED
    elif not args.ca:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if args.tls12_only:
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    if args.alpn:
        ctx.set_alpn_protocols(args.alpn.split(","))
    return ctx


def recv_exactly(s, n):
    data = bytearray()
    while len(data) < n:
        chunk = s.recv(min(1 << 20, n - len(data)))
        if not chunk:
            raise EOFError("closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return bytes(data)


def run(s, server):
    say("SECURE %s %s %s" % (s.version(), s.selected_alpn_protocol() or "-", s.cipher()[0]))
    mode = args.mode
    if mode == "echo":
        if server:
            while True:
                data = s.recv(65536)
                if not data:
                    break
                s.sendall(data)
        else:
            s.sendall(args.message.encode())
            reply = recv_exactly(s, len(args.message.encode()))
            say("GOT " + reply.decode().rstrip("\n"))
    elif mode == "sink":
        (length,) = struct.unpack(">Q", recv_exactly(s, 8))
        digest = hashlib.sha256()
        remaining = length
        while remaining:
            chunk = s.recv(min(1 << 20, remaining))
            if not chunk:
                raise EOFError("closed with %d bytes missing" % remaining)
            digest.update(chunk)
            remaining -= len(chunk)
        s.sendall(("%d %s\n" % (length, digest.hexdigest())).encode())
        say("SUNK %d %s" % (length, digest.hexdigest()))
        s.recv(1)
    elif mode.startswith("source:"):
        total = int(mode.split(":")[1])
        pattern = bytes(i % 251 for i in range(251 * 4096))
        sent = 0
        while sent < total:
            n = min(len(pattern), total - sent)
            s.sendall(pattern[:n])
            sent += n
        say("SOURCED %d" % total)
        s.recv(1)


def serve(raw, ctx):
    try:
        if args.starttls:
            if args.greeting:
                raw.sendall((args.greeting + "\n").encode())
            line = b""
            while not line.endswith(b"\n"):
                byte = raw.recv(1)
                if not byte:
                    return
                line += byte
            say("PLAIN " + line.decode().rstrip("\n"))
        tls = ctx.wrap_socket(raw, server_side=True)
        run(tls, True)
    except Exception as error:  # noqa: BLE001 - each connection reports its own failure
        say("ERROR %s" % error)
    finally:
        raw.close()


def main():
    if args.role == "server":
        ctx = context(True)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", args.port))
        listener.listen(256)
        say("PORT %d" % listener.getsockname()[1])
        threads = []
        for _ in range(args.accept):
            raw, _ = listener.accept()
            thread = threading.Thread(target=serve, args=(raw, ctx))
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join()
        say("DONE")
        return 0
    ctx = context(False)
    raw = socket.create_connection(("127.0.0.1", args.port))
    try:
        if args.starttls:
            raw.sendall(b"STARTTLS\n")
        tls = ctx.wrap_socket(raw, server_hostname=args.server_name)
        run(tls, False)
        tls.close()
    except Exception as error:  # noqa: BLE001
        say("ERROR %s" % error)
        return 1
    say("DONE")
    return 0


sys.exit(main())
