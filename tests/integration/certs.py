"""Throwaway certificates for the https tests: a CA, a server certificate for 127.0.0.1 and a
client certificate, made with the ``cryptography`` package when it is installed, else with the
``openssl`` command; ``available()`` says whether either exists."""

from __future__ import annotations

import datetime
import importlib.util
import os
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Certs:
    ca: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str


def available() -> bool:
    return importlib.util.find_spec("cryptography") is not None or shutil.which("openssl") is not None


def make(folder: str, client_cn: str = "jane") -> Certs:
    if importlib.util.find_spec("cryptography") is not None:
        return _with_cryptography(folder, client_cn)
    return _with_openssl(folder, client_cn)


def _with_cryptography(folder: str, client_cn: str) -> Certs:
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def write(path: str, data: bytes) -> str:
        full = os.path.join(folder, path)
        with open(full, "wb") as fh:
            fh.write(data)
        return full

    def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("kplan-test-ca")).issuer_name(name("kplan-test-ca"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))

    def leaf(cn: str, server: bool) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        b = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(ca.subject)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
             .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
             .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server
                                                   else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
        if server:
            b = b.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                             x509.DNSName("localhost")]), critical=False)
        cert = b.sign(ca_key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), key_pem(key)

    server_cert, server_key = leaf("127.0.0.1", True)
    client_cert, client_key = leaf(client_cn, False)
    return Certs(write("ca.crt", ca.public_bytes(serialization.Encoding.PEM)),
                 write("server.crt", server_cert), write("server.key", server_key),
                 write("client.crt", client_cert), write("client.key", client_key))


def _with_openssl(folder: str, client_cn: str) -> Certs:
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
        "-subj", "/CN=kplan-test-ca", "-keyout", "ca.key", "-out", "ca.crt",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for stem, cn, ext in (("server", "127.0.0.1", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                                  "extendedKeyUsage=serverAuth\n"),
                          ("client", client_cn, "extendedKeyUsage=clientAuth\n")):
        with open(os.path.join(folder, f"{stem}.ext"), "w") as fh:
            fh.write("basicConstraints=CA:FALSE\n" + ext)
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={cn}",
            "-keyout", f"{stem}.key", "-out", f"{stem}.csr")
        run("x509", "-req", "-in", f"{stem}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "1", "-extfile", f"{stem}.ext", "-out", f"{stem}.crt")
    j = lambda f: os.path.join(folder, f)  # noqa: E731
    return Certs(j("ca.crt"), j("server.crt"), j("server.key"), j("client.crt"), j("client.key"))
