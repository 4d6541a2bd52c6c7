#!/usr/bin/env python3
"""A real SMTP server for Latchkey's SMTP client interop suite (aiosmtpd).

Listens on 127.0.0.1 on ephemeral ports:

  plain     no TLS offered, no AUTH
  starttls  STARTTLS offered (not forced), AUTH PLAIN/LOGIN after STARTTLS only
  smtps     implicit TLS from the first byte, AUTH PLAIN/LOGIN
  wrongname implicit TLS with a certificate for another host name (must be refused)

Certificates come from a throw-away CA generated at start (`cryptography`); the server
certificate names `localhost` and `127.0.0.1`. Every accepted message is written to
DIR/messages/<n>.eml (the bytes as received, dots already un-stuffed by the server) with
DIR/messages/<n>.json beside it (envelope, port name, TLS, authenticated user). DIR/server.json
says where everything is: {"ports": {...}, "ca_file": ..., "user": ..., "password": ...}.

Usage: smtp_server.py DIR   (runs until SIGTERM / SIGINT)
"""

import asyncio
import datetime
import ipaddress
import json
import os
import signal
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword, SMTP
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

USER = "latchkey"
PASSWORD = "s3cret pass:word"


def make_ca():
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Latchkey interop test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_server_cert(ca_key, ca_cert, names, ips):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    alternative = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (names or ips)[0])]))
        .issuer_name(ca_cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def write_pem(path, key=None, cert=None):
    with open(path, "wb") as f:
        if cert is not None:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
        if key is not None:
            f.write(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def server_context(cert_path):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_path)
    return context


class Recorder:
    """aiosmtpd handler: keeps every message on disk."""

    def __init__(self, directory, port_name):
        self.directory = directory
        self.port_name = port_name

    async def handle_DATA(self, server, session, envelope):
        with Recorder.lock:
            Recorder.count += 1
            number = Recorder.count
        base = os.path.join(self.directory, "%04d" % number)
        with open(base + ".eml", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        authenticated = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        meta = {
            "port": self.port_name,
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "tls": session.ssl is not None or self.port_name in ("smtps", "wrongname"),
            "auth_user": authenticated,
        }
        with open(base + ".json", "w") as f:
            json.dump(meta, f)
        return "250 2.0.0 OK stored"


Recorder.lock = threading.Lock()
Recorder.count = 0


def authenticator(server, session, envelope, mechanism, auth_data):
    if not isinstance(auth_data, LoginPassword):
        return AuthResult(success=False, handled=False)
    ok = auth_data.login == USER.encode() and auth_data.password == PASSWORD.encode()
    return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)


class TLSController(Controller):
    """A controller whose TLS handshake (smtps) must not run in `_trigger_server`, which
    connects without our CA; we check readiness with a plain TCP connect instead."""

    def _trigger_server(self):
        import socket
        with socket.create_connection((self.hostname, self.port), timeout=5):
            pass


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    directory = os.path.abspath(sys.argv[1])
    messages = os.path.join(directory, "messages")
    os.makedirs(messages, exist_ok=True)

    ca_key, ca_cert = make_ca()
    ca_file = os.path.join(directory, "ca.pem")
    write_pem(ca_file, cert=ca_cert)
    good_key, good_cert = make_server_cert(ca_key, ca_cert, ["localhost"], ["127.0.0.1"])
    good_pem = os.path.join(directory, "server.pem")
    write_pem(good_pem, key=good_key, cert=good_cert)
    wrong_key, wrong_cert = make_server_cert(ca_key, ca_cert, ["mail.other.invalid"], [])
    wrong_pem = os.path.join(directory, "wrongname.pem")
    write_pem(wrong_pem, key=wrong_key, cert=wrong_cert)

    common = dict(hostname="127.0.0.1", port=0, authenticator=authenticator, auth_require_tls=True,
                  server_hostname="interop.latchkey.test")
    controllers = {
        "plain": Controller(Recorder(messages, "plain"), **common),
        "starttls": Controller(Recorder(messages, "starttls"), tls_context=server_context(good_pem),
                               require_starttls=False, **common),
        # Implicit TLS: aiosmtpd only counts STARTTLS as TLS for auth_require_tls; the whole
        # connection is TLS here, so AUTH is allowed from the start.
        "smtps": TLSController(Recorder(messages, "smtps"), ssl_context=server_context(good_pem),
                               **dict(common, auth_require_tls=False)),
        "wrongname": TLSController(Recorder(messages, "wrongname"), ssl_context=server_context(wrong_pem),
                                   **dict(common, auth_require_tls=False)),
    }
    # port=0 asks the OS for a free port; aiosmtpd's Controller needs a concrete one, so pick them first.
    import socket
    for name, controller in controllers.items():
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            controller.port = probe.getsockname()[1]
        controller.start()

    info = {
        "ports": {name: c.port for name, c in controllers.items()},
        "ca_file": ca_file,
        "messages": messages,
        "user": USER,
        "password": PASSWORD,
    }
    temporary = os.path.join(directory, "server.json.partial")
    with open(temporary, "w") as f:
        json.dump(info, f)
    os.rename(temporary, os.path.join(directory, "server.json"))
    print("smtp_server: listening %s" % json.dumps(info["ports"]), flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    for controller in controllers.values():
        controller.stop()


if __name__ == "__main__":
    main()
