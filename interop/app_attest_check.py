#!/usr/bin/env python3
"""Holds Latchkey's App Attest verifier (`latchkey app-attest-check`) to one real iPhone's
attestation and assertion (iOS 14.4, development environment; shared/data/appattest), checked
against Apple's published App Attestation Root CA.

What it proves:

* the real artefacts are accepted: the attestation at `validDate` (also with the App ID among
  others, with the root appended to x5c, in url-safe base64, at the leaf's notBefore and a second
  before its notAfter), answering the App ID and the leaf's public key; the assertion over a
  stored counter of 0, answering counter 1;
* everything derived from them that Apple's "Validating apps that connect to your server" says
  to refuse is refused, with the reason the verifier owes:
  - every byte of authData XOR 0xFF, one position at a time (all of them: the nonce in the leaf
    covers the whole of authData, so no flip may pass);
  - every byte (no sampling) of the leaf and of the intermediate certificate XOR 0xFF;
  - every byte of the assertion's signature and of its authenticatorData XOR 0xFF;
  - another App ID, the App ID in other letter case, an empty App ID list; the assertion for
    another App ID;
  - `expiredDate`, a second past the leaf's notAfter, a second before its notBefore;
  - the production environment demanded of a development key;
  - a stored counter of 1, 2 or 2^32-1 (the assertion's counter 1 is not above it);
  - another key id (another hash, one byte changed, one byte short); another client data hash;
    other client data for the assertion; another public key for the assertion;
  - x5c in the wrong order, without its intermediate, or empty;
  - a chain under a root that is not Apple's: a forged root, intermediate and leaf made here with
    `cryptography`, named as Apple names them and carrying the real leaf's key and extensions.
    Under Apple's root it is refused; under the forged root (a second checker process, whose
    --root is the forgery) it is accepted, which shows the forgery is right in every other way,
    so its refusal is the root's doing; and that process refuses the real attestation;
  - another fmt ("apple", "packed", "none", one with a trailing space, none at all), attStmt
    without its receipt, no authData;
  - a byte after the CBOR of the attestation object and of the assertion.

What it cannot prove: the checks whose failure needs a new leaf signed under Apple's root (a
counter other than 0, the production AAGUID, a credential id other than the key id, each behind a
matching nonce) are for Tests/WebAuthnTests/AppAttestTests.swift, whose chain is its own; the
receipt is kept, not checked.

Mutated CBOR is re-encoded with `cbor2` (which gives back the vector's own bytes unchanged,
checked first). The cases go as JSON lines to one `latchkey app-attest-check` process per root
(two in all). Prints a line per failed case and `app_attest: N cases, P passed, F failed`;
exits 1 on any failure.

Usage: app_attest_check.py LATCHKEY_BINARY DATA_DIR   (DATA_DIR holds ios-14.4.json and
Apple_App_Attestation_Root_CA.pem; read from there at run time, never copied into the project)
"""
import base64
import datetime
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

ROOT_FILE = "Apple_App_Attestation_Root_CA.pem"
VECTOR_FILE = "ios-14.4.json"


def b64(data):
    return base64.b64encode(data).decode()


def unix(text):
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def flipped(data, index):
    out = bytearray(data)
    out[index] ^= 0xFF
    return bytes(out)


class Vector:
    """The real attestation and assertion, decoded."""

    def __init__(self, directory):
        document = json.loads((directory / VECTOR_FILE).read_text())
        attestation, assertion = document["attestation"], document["assertion"]
        self.app_id = attestation["teamIdentifier"] + "." + attestation["bundleIdentifier"]
        self.attestation = base64.b64decode(attestation["attestationBase64"])
        self.key_id = base64.b64decode(attestation["keyIdBase64"])
        self.client_data_hash = base64.b64decode(attestation["clientDataHashSha256Base64"])
        self.valid_date = unix(attestation["validDate"])
        self.expired_date = unix(attestation["expiredDate"])
        self.assertion = base64.b64decode(assertion["assertionBase64"])
        self.client_data = base64.b64decode(assertion["clientDataBase64"])
        self.counter = assertion["counter"]
        public_key = serialization.load_pem_public_key(attestation["publicKey"].encode())
        self.public_key = public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)

        self.object = cbor2.loads(self.attestation)
        self.assertion_object = cbor2.loads(self.assertion)
        self.leaf_der, self.intermediate_der = self.object["attStmt"]["x5c"]
        self.leaf = x509.load_der_x509_certificate(self.leaf_der)
        self.intermediate = x509.load_der_x509_certificate(self.intermediate_der)
        self.root = x509.load_pem_x509_certificate((directory / ROOT_FILE).read_bytes())
        self.not_before = int(self.leaf.not_valid_before_utc.timestamp())
        self.not_after = int(self.leaf.not_valid_after_utc.timestamp())

    def check_itself(self):
        """What the suite's cases rest on: a wrong premise would make every refusal meaningless."""
        problems = []
        if cbor2.dumps(self.object) != self.attestation or cbor2.dumps(self.assertion_object) != self.assertion:
            problems.append("cbor2 does not re-encode the vector to its own bytes")
        if hashlib.sha256(self.client_data).digest() != self.client_data_hash:
            problems.append("clientDataHash is not SHA-256 of clientData")
        if hashlib.sha256(self.public_key).digest() != self.key_id:
            problems.append("keyId is not SHA-256 of the public key")
        if not self.not_before < self.valid_date < self.not_after < self.expired_date:
            problems.append("validDate/expiredDate do not lie inside/past the leaf's validity")
        if self.counter != 1:
            problems.append("the assertion's counter is not 1")
        return problems

    def attestation_with(self, **changes):
        """The attestation object re-encoded with fields of it replaced (x5c, authData, fmt...)."""
        statement = dict(self.object["attStmt"])
        item = dict(self.object)
        for key, value in changes.items():
            if key in ("x5c", "receipt"):
                if value is None:
                    statement.pop(key)
                else:
                    statement[key] = value
            elif value is None:
                item.pop(key)
            else:
                item[key] = value
        item["attStmt"] = statement
        return cbor2.dumps(item)

    def assertion_with(self, **changes):
        return cbor2.dumps({**self.assertion_object, **changes})


class Forgery:
    """A root, intermediate and leaf that are not Apple's but are named as Apple names them; the
    leaf has the real leaf's subject, serial, validity, extensions (the nonce among them) and key."""

    def __init__(self, vector):
        root_key = ec.generate_private_key(ec.SECP384R1())
        intermediate_key = ec.generate_private_key(ec.SECP384R1())
        self.root = self.certificate(vector.root, root_key.public_key(), root_key, vector.root.subject)
        self.intermediate = self.certificate(vector.intermediate, intermediate_key.public_key(), root_key, self.root.subject)
        self.leaf = self.certificate(vector.leaf, vector.leaf.public_key(), intermediate_key, self.intermediate.subject)

    @staticmethod
    def certificate(model, public_key, signer, issuer):
        builder = (
            x509.CertificateBuilder()
            .subject_name(model.subject)
            .issuer_name(issuer)
            .public_key(public_key)
            .serial_number(model.serial_number)
            .not_valid_before(model.not_valid_before_utc)
            .not_valid_after(model.not_valid_after_utc))
        for extension in model.extensions:
            if isinstance(extension.value, x509.AuthorityKeyIdentifier):
                value = x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key())
            elif isinstance(extension.value, x509.SubjectKeyIdentifier):
                value = x509.SubjectKeyIdentifier.from_public_key(public_key)
            else:
                value = extension.value
            builder = builder.add_extension(value, extension.critical)
        return builder.sign(signer, model.signature_hash_algorithm)

    @staticmethod
    def der(certificate):
        return certificate.public_bytes(serialization.Encoding.DER)


class Suite:
    def __init__(self, vector):
        self.vector = vector
        self.cases = {}  # root name -> [(name, request, expected)]

    def add(self, name, request, expected, root="apple"):
        self.cases.setdefault(root, []).append((name, request, expected))

    def attestation(self, name, expected, attestation=None, key_id=None, client_data_hash=None, app_ids=None,
                    environment="development", now=None, root="apple", encode=b64):
        v = self.vector
        self.add(name, {
            "attestation": encode(v.attestation if attestation is None else attestation),
            "key_id": b64(v.key_id if key_id is None else key_id),
            "client_data_hash": b64(v.client_data_hash if client_data_hash is None else client_data_hash),
            "app_ids": [v.app_id] if app_ids is None else app_ids,
            "environment": environment,
            "now": v.valid_date if now is None else now,
        }, expected, root)

    def assertion(self, name, expected, assertion=None, client_data=None, public_key=None, app_id=None, counter=0):
        v = self.vector
        self.add(name, {
            "assertion": b64(v.assertion if assertion is None else assertion),
            "client_data": b64(v.client_data if client_data is None else client_data),
            "public_key": b64(v.public_key if public_key is None else public_key),
            "app_id": v.app_id if app_id is None else app_id,
            "counter": counter,
        }, expected)

    def run(self, binary, root_files):
        failures = []
        total = 0
        for root, cases in self.cases.items():
            lines = "".join(json.dumps(request) + "\n" for _, request, _ in cases)
            process = subprocess.run([binary, "app-attest-check", "--root", str(root_files[root])], input=lines,
                                     capture_output=True, text=True, timeout=300)
            answers = process.stdout.splitlines()
            if process.returncode != 0 or len(answers) != len(cases):
                failures.append(f"the checker under the {root} root exited {process.returncode} after {len(answers)} of "
                                f"{len(cases)} answers: {process.stderr.strip()[-400:]}")
            for index, (name, _, expected) in enumerate(cases):
                total += 1
                if index >= len(answers):
                    failures.append(f"{name}: no answer")
                    continue
                try:
                    answer = json.loads(answers[index])
                except json.JSONDecodeError:
                    failures.append(f"{name}: not JSON: {answers[index]!r}")
                    continue
                wrong = {key: answer.get(key) for key, value in expected.items() if answer.get(key) != value}
                if wrong:
                    failures.append(f"{name} ({root} root): expected {expected}, got {answer}")
        return total, failures


def accepted_attestation(vector):
    return {"ok": True, "app_id": vector.app_id, "public_key": b64(vector.public_key)}


def refused(reason):
    return {"ok": False, "reason": reason}


def build(vector, forgery):
    v = vector
    suite = Suite(v)
    accepted = accepted_attestation(v)
    leaf, intermediate, root_der = v.leaf_der, v.intermediate_der, v.root.public_bytes(serialization.Encoding.DER)
    other_hash = hashlib.sha256(b"another challenge").digest()

    # The real attestation, as it is and in forms that must change nothing.
    suite.attestation("attestation at validDate", accepted)
    suite.attestation("attestation, the App ID among others", accepted, app_ids=["ABCDE12345.com.example.other", v.app_id])
    suite.attestation("attestation at the leaf's notBefore", accepted, now=v.not_before)
    # OpenSSL (X509_cmp_time) takes notAfter itself as expired, RFC 5280 as valid: that second is left out.
    suite.attestation("attestation a second before the leaf's notAfter", accepted, now=v.not_after - 1)
    suite.attestation("attestation with the root appended to x5c", accepted, attestation=v.attestation_with(x5c=[leaf, intermediate, root_der]))
    suite.attestation("attestation in url-safe base64 without padding", accepted,
                      encode=lambda data: base64.urlsafe_b64encode(data).decode().rstrip("="))

    # Every byte of authData: the nonce covers all of it.
    for index in range(len(v.object["authData"])):
        suite.attestation(f"authData byte {index} flipped", refused("bad_attestation"),
                          attestation=v.attestation_with(authData=flipped(v.object["authData"], index)))
    # Every byte of both certificates.
    for index in range(len(leaf)):
        suite.attestation(f"leaf certificate byte {index} flipped", refused("bad_attestation"),
                          attestation=v.attestation_with(x5c=[flipped(leaf, index), intermediate]))
    for index in range(len(intermediate)):
        suite.attestation(f"intermediate certificate byte {index} flipped", refused("bad_attestation"),
                          attestation=v.attestation_with(x5c=[leaf, flipped(intermediate, index)]))

    # What the server expects, changed.
    suite.attestation("another App ID", refused("rp_id_mismatch"), app_ids=["6MURL8TA57.de.vincent-haupert.other"])
    suite.attestation("the App ID in lower case", refused("rp_id_mismatch"), app_ids=[v.app_id.lower()])
    suite.attestation("an empty App ID list", refused("rp_id_mismatch"), app_ids=[])
    suite.attestation("at expiredDate", refused("bad_attestation"), now=v.expired_date)
    suite.attestation("a second past the leaf's notAfter", refused("bad_attestation"), now=v.not_after + 1)
    suite.attestation("a second before the leaf's notBefore", refused("bad_attestation"), now=v.not_before - 1)
    suite.attestation("the production environment demanded", refused("bad_attestation"), environment="production")
    suite.attestation("another key id", refused("bad_attestation"), key_id=hashlib.sha256(b"another key").digest())
    suite.attestation("the key id with a byte changed", refused("bad_attestation"), key_id=flipped(v.key_id, 31))
    suite.attestation("the key id a byte short", refused("bad_attestation"), key_id=v.key_id[:31])
    suite.attestation("another client data hash", refused("bad_attestation"), client_data_hash=other_hash)
    suite.attestation("the client data hash with a byte changed", refused("bad_attestation"), client_data_hash=flipped(v.client_data_hash, 0))
    suite.attestation("client data instead of its hash", refused("bad_attestation"), client_data_hash=v.client_data)

    # The chain, rearranged or replaced.
    suite.attestation("x5c in the wrong order", refused("bad_attestation"), attestation=v.attestation_with(x5c=[intermediate, leaf]))
    suite.attestation("x5c without the intermediate", refused("malformed"), attestation=v.attestation_with(x5c=[leaf]))
    suite.attestation("x5c with the leaf twice", refused("bad_attestation"), attestation=v.attestation_with(x5c=[leaf, leaf]))
    suite.attestation("x5c empty", refused("malformed"), attestation=v.attestation_with(x5c=[]))
    forged_chain = [Forgery.der(forgery.leaf), Forgery.der(forgery.intermediate)]
    suite.attestation("a forged chain under a root that is not Apple's", refused("bad_attestation"), attestation=v.attestation_with(x5c=forged_chain))
    suite.attestation("the real leaf with a forged intermediate of the same name", refused("bad_attestation"),
                      attestation=v.attestation_with(x5c=[leaf, Forgery.der(forgery.intermediate)]))
    suite.attestation("the forged chain with its root appended", refused("bad_attestation"),
                      attestation=v.attestation_with(x5c=forged_chain + [Forgery.der(forgery.root)]))
    suite.attestation("control: the forged chain, its own root trusted", accepted, attestation=v.attestation_with(x5c=forged_chain), root="forged")
    suite.attestation("the real attestation, only the forged root trusted", refused("bad_attestation"), root="forged")

    # The envelope.
    for fmt in ("apple", "packed", "none", "apple-appattest "):
        suite.attestation(f"fmt {fmt!r}", refused("unsupported_format"), attestation=v.attestation_with(fmt=fmt))
    suite.attestation("no fmt", refused("unsupported_format"), attestation=v.attestation_with(fmt=None))
    suite.attestation("attStmt without its receipt", refused("malformed"), attestation=v.attestation_with(receipt=None))
    suite.attestation("no authData", refused("malformed"), attestation=v.attestation_with(authData=None))
    suite.attestation("a byte after the attestation object's CBOR", refused("malformed"), attestation=v.attestation + b"\x00")

    # The real assertion.
    suite.assertion("assertion over stored counter 0", {"ok": True, "counter": 1})
    signature, authenticator_data = v.assertion_object["signature"], v.assertion_object["authenticatorData"]
    for index in range(len(signature)):
        suite.assertion(f"assertion signature byte {index} flipped", refused("bad_signature"),
                        assertion=v.assertion_with(signature=flipped(signature, index)))
    for index in range(len(authenticator_data)):
        suite.assertion(f"assertion authenticatorData byte {index} flipped", refused("bad_signature"),
                        assertion=v.assertion_with(authenticatorData=flipped(authenticator_data, index)))
    for stored in (1, 2, 2**32 - 1):
        suite.assertion(f"assertion over stored counter {stored}", refused("counter_regressed"), counter=stored)
    suite.assertion("assertion for another App ID", refused("rp_id_mismatch"), app_id="6MURL8TA57.de.vincent-haupert.other")
    suite.assertion("assertion over other client data", refused("bad_signature"), client_data=v.client_data + b"!")
    suite.assertion("assertion over no client data", refused("bad_signature"), client_data=b"")
    suite.assertion("assertion over the client data's hash", refused("bad_signature"), client_data=v.client_data_hash)
    other_key = ec.generate_private_key(ec.SECP256R1()).public_key()
    suite.assertion("assertion checked with another key", refused("bad_signature"),
                    public_key=other_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))
    suite.assertion("a byte after the assertion's CBOR", refused("malformed"), assertion=v.assertion + b"\x00")
    suite.assertion("assertion without its signature", refused("malformed"), assertion=cbor2.dumps({"authenticatorData": authenticator_data}))
    suite.assertion("assertion's authenticatorData a byte longer", refused("malformed"),
                    assertion=v.assertion_with(authenticatorData=authenticator_data + b"\x00"))
    return suite


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, directory = sys.argv[1], Path(sys.argv[2])
    for name in (VECTOR_FILE, ROOT_FILE):
        if not (directory / name).is_file():
            sys.exit(f"app_attest: {directory / name} is missing (LATCHKEY_SHARED_DATA/appattest)")
    vector = Vector(directory)
    problems = vector.check_itself()
    if problems:
        sys.exit("app_attest: the vector is not what the suite assumes: " + "; ".join(problems))
    forgery = Forgery(vector)
    suite = build(vector, forgery)
    with tempfile.TemporaryDirectory(prefix="latchkey-app-attest-") as work:
        forged_root = Path(work) / "forged-root.pem"
        forged_root.write_bytes(forgery.root.public_bytes(serialization.Encoding.PEM))
        total, failures = suite.run(binary, {"apple": directory / ROOT_FILE, "forged": forged_root})
    for failure in failures:
        print("app_attest: FAILED: " + failure)
    failed = sum(1 for failure in failures if not failure.startswith("the checker"))
    print(f"app_attest: {total} cases, {total - failed} passed, {failed} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
